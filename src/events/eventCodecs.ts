import type * as t from 'io-ts';
import { AskUserEvent } from './AskUserEvent.js';
import { DoneEvent } from './DoneEvent.js';
import { ErrorEvent } from './ErrorEvent.js';
import type { EvoEvent } from './EvoEvent.js';
import type { EvoEventType } from './EvoEventType.js';
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

/**
 * The codec of each known event, by `type`. Decoding dispatches on `type`
 * through this table instead of trying every member of the `EvoEvent` union,
 * and a wrong shape is then reported against the one codec it was meant for.
 */
export const eventCodecs: { readonly [K in EvoEventType]: t.Type<Extract<EvoEvent, { type: K }>, unknown, unknown> } =
  Object.freeze(
    Object.assign(Object.create(null) as object, {
      thinking: ThinkingEvent,
      text: TextEvent,
      tool_call: ToolCallEvent,
      tool_result: ToolResultEvent,
      subagent_start: SubagentStartEvent,
      subagent_tool_call: SubagentToolCallEvent,
      subagent_tool_result: SubagentToolResultEvent,
      subagent_text: SubagentTextEvent,
      subagent_end: SubagentEndEvent,
      tool_selection: ToolSelectionEvent,
      summarization_start: SummarizationStartEvent,
      summarization: SummarizationEvent,
      usage_stats: UsageStatsEvent,
      interrupt: InterruptEvent,
      ask_user: AskUserEvent,
      error: ErrorEvent,
      done: DoneEvent,
    }),
  );
