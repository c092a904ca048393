import type { SubagentTextEvent } from '../src/events/SubagentTextEvent.js';
import type { SubagentToolCallEvent } from '../src/events/SubagentToolCallEvent.js';
import type { SubagentToolResultEvent } from '../src/events/SubagentToolResultEvent.js';

/** An event made inside a sub-agent: what a delegation's `events$` carries. */
export type SubagentEvent = SubagentToolCallEvent | SubagentToolResultEvent | SubagentTextEvent;
