import * as t from 'io-ts';
import { AskUserEvent } from './AskUserEvent.js';
import { DoneEvent } from './DoneEvent.js';
import { ErrorEvent } from './ErrorEvent.js';
import { InterruptEvent } from './InterruptEvent.js';
import { SubagentEndEvent } from './SubagentEndEvent.js';
import { SubagentStartEvent } from './SubagentStartEvent.js';
import { SubagentTextEvent } from './SubagentTextEvent.js';
import { SubagentToolCallEvent } from './SubagentToolCallEvent.js';
import { SubagentToolResultEvent } from './SubagentToolResultEvent.js';
import { SummarizationEvent } from './SummarizationEvent.js';
import { SummarizationStartEvent } from './SummarizationStartEvent.js';
import { TextEvent } from './TextEvent.js';
import { ThinkingEvent } from './ThinkingEvent.js';
import { ToolCallEvent } from './ToolCallEvent.js';
import { ToolResultEvent } from './ToolResultEvent.js';
import { ToolSelectionEvent } from './ToolSelectionEvent.js';
import { UsageStatsEvent } from './UsageStatsEvent.js';

/** Every event of the stream-json protocol; narrows on `type`. */
export const EvoEvent = t.union(
  [
    ThinkingEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    SubagentStartEvent,
    SubagentToolCallEvent,
    SubagentToolResultEvent,
    SubagentTextEvent,
    SubagentEndEvent,
    ToolSelectionEvent,
    SummarizationStartEvent,
    SummarizationEvent,
    UsageStatsEvent,
    InterruptEvent,
    AskUserEvent,
    ErrorEvent,
    DoneEvent,
  ],
  'EvoEvent',
);
export type EvoEvent = t.TypeOf<typeof EvoEvent>;
