import {
  unknownEvent,
  type ActionRequest,
  type AskUserEvent,
  type AskUserQuestion,
  type DoneEvent,
  type ErrorEvent,
  type InterruptEvent,
  type PanelDispatchCompleteEvent,
  type PanelDispatchErrorEvent,
  type PanelDispatchStartEvent,
  type ReviewConfig,
  type SubagentEndEvent,
  type SubagentStartEvent,
  type SubagentTextEvent,
  type SubagentToolCallEvent,
  type SubagentToolResultEvent,
  type SummarizationEvent,
  type SummarizationStartEvent,
  type TextEvent,
  type ThinkingEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type ToolSelectionEvent,
  type UsageStatsEvent,
  type UnknownEvent,
} from '../src/events/codecs.js';

/** An event's fields, any of them possibly `undefined` before `sent` leaves those out. */
type Loose<T> = { [K in keyof T]: T[K] | undefined };

/** Leaves out the fields whose value is `undefined`, as a producer that does not send them. */
function sent<T extends object>(event: Loose<T>): T {
  for (const key of Object.keys(event) as (keyof T)[]) if (event[key] === undefined) delete event[key];
  return event as T;
}

/**
 * The options object of a builder, or the value an older, positional call
 * gave in its place (read as the options' first field): a string or number
 * never looks like an options object, so the old calls cost nothing to keep.
 */
function optionsOf<O extends object>(given: O | string | number | undefined, field: keyof O): Partial<O> {
  if (given === undefined) return {};
  return typeof given === 'object' ? given : ({ [field]: given } as Partial<O>);
}

function thinking(content: string, options?: { id?: string | number }): ThinkingEvent;
/** @deprecated Pass the id as `{ id }`. */
function thinking(content: string, id: string | number | undefined): ThinkingEvent;
function thinking(content: string, options?: { id?: string | number } | string | number): ThinkingEvent {
  const { id = 0 } = optionsOf(options, 'id');
  return { type: 'thinking', content, id };
}

function toolCall(name: string, args?: Record<string, unknown>, options?: { id?: string }): ToolCallEvent;
/** @deprecated Pass the id as `{ id }`. */
function toolCall(name: string, args: Record<string, unknown>, id: string | undefined): ToolCallEvent;
function toolCall(name: string, args: Record<string, unknown> = {}, options?: { id?: string } | string): ToolCallEvent {
  const { id = '' } = optionsOf(options, 'id');
  return { type: 'tool_call', name, args, id };
}

/** `id` left out: the shape of an older producer's result. */
function toolResult(name: string, content: string, options: { id?: string; success?: boolean } = {}): ToolResultEvent {
  const { id, success = true } = options;
  return sent<ToolResultEvent>({ type: 'tool_result', name, content, success, id });
}

/** The start of a delegation; 0.2.x sends `instanceId` and `toolCallId` (the `task` call), and `description: ""`. */
function subagentStart(
  name: string,
  options: { description?: string; instanceId?: string; toolCallId?: string } = {},
): SubagentStartEvent {
  const { description = '', instanceId, toolCallId } = options;
  return sent<SubagentStartEvent>({
    type: 'subagent_start',
    name,
    description,
    instance_id: instanceId,
    tool_call_id: toolCallId,
  });
}

/** The ids of `events.subagentToolCall`: the call's `id` and its sub-agent's `instance_id`; leave either out for an older producer's shape. */
export type SubagentCallOptions = {
  /** The call's `id`; default `""`. */
  id?: string;
  /** The delegation's `instance_id`; left out by default. */
  instanceId?: string;
};

function subagentToolCall(
  subagent: string,
  name: string,
  args?: Record<string, unknown>,
  options?: SubagentCallOptions,
): SubagentToolCallEvent;
/** @deprecated Pass `{ id, instanceId }`. */
function subagentToolCall(
  subagent: string,
  name: string,
  args: Record<string, unknown>,
  id: string | undefined,
  instanceId?: string,
): SubagentToolCallEvent;
function subagentToolCall(
  subagent: string,
  name: string,
  args: Record<string, unknown> = {},
  options?: SubagentCallOptions | string,
  instanceIdGiven?: string,
): SubagentToolCallEvent {
  const { id = '', instanceId = instanceIdGiven } = optionsOf(options, 'id');
  return sent<SubagentToolCallEvent>({ type: 'subagent_tool_call', subagent, name, args, id, instance_id: instanceId });
}

function subagentToolResult(
  subagent: string,
  name: string,
  content: string,
  options: { id?: string; instanceId?: string; success?: boolean } = {},
): SubagentToolResultEvent {
  const { id, instanceId, success = true } = options;
  return sent<SubagentToolResultEvent>({
    type: 'subagent_tool_result',
    subagent,
    name,
    content,
    success,
    id,
    instance_id: instanceId,
  });
}

function subagentText(subagent: string, content: string, options?: { instanceId?: string }): SubagentTextEvent;
/** @deprecated Pass `{ instanceId }`. */
function subagentText(subagent: string, content: string, instanceId: string | undefined): SubagentTextEvent;
function subagentText(
  subagent: string,
  content: string,
  options?: { instanceId?: string } | string,
): SubagentTextEvent {
  const { instanceId } = optionsOf(options, 'instanceId');
  return sent<SubagentTextEvent>({ type: 'subagent_text', subagent, content, instance_id: instanceId });
}

function subagentEnd(name: string, options?: { instanceId?: string }): SubagentEndEvent;
/** @deprecated Pass `{ instanceId }`. */
function subagentEnd(name: string, instanceId: string | undefined): SubagentEndEvent;
function subagentEnd(name: string, options?: { instanceId?: string } | string): SubagentEndEvent {
  const { instanceId } = optionsOf(options, 'instanceId');
  return sent<SubagentEndEvent>({ type: 'subagent_end', name, instance_id: instanceId });
}

function panelDispatchStart(
  id: string,
  options: { evalId?: string; subagentType?: string; label?: string; description?: string } = {},
): PanelDispatchStartEvent {
  const { evalId = '', subagentType = 'research-agent', label = '', description = '' } = options;
  return { type: 'panel_dispatch_start', eval_id: evalId, id, subagent_type: subagentType, label, description };
}

function panelDispatchComplete(
  id: string,
  durationMs: number,
  options?: { evalId?: string },
): PanelDispatchCompleteEvent;
/** @deprecated Pass `{ evalId }`. */
function panelDispatchComplete(id: string, durationMs: number, evalId: string | undefined): PanelDispatchCompleteEvent;
function panelDispatchComplete(
  id: string,
  durationMs: number,
  options?: { evalId?: string } | string,
): PanelDispatchCompleteEvent {
  const { evalId = '' } = optionsOf(options, 'evalId');
  return { type: 'panel_dispatch_complete', eval_id: evalId, id, duration_ms: durationMs };
}

function panelDispatchError(
  id: string,
  error: string,
  durationMs: number,
  options?: { evalId?: string },
): PanelDispatchErrorEvent;
/** @deprecated Pass `{ evalId }`. */
function panelDispatchError(
  id: string,
  error: string,
  durationMs: number,
  evalId: string | undefined,
): PanelDispatchErrorEvent;
function panelDispatchError(
  id: string,
  error: string,
  durationMs: number,
  options?: { evalId?: string } | string,
): PanelDispatchErrorEvent {
  const { evalId = '' } = optionsOf(options, 'evalId');
  return { type: 'panel_dispatch_error', eval_id: evalId, id, duration_ms: durationMs, error };
}

function interrupt(
  interruptId: string,
  actionRequests?: ActionRequest[],
  options?: { reviewConfigs?: ReviewConfig[] },
): InterruptEvent;
/** @deprecated Pass `{ reviewConfigs }`. */
function interrupt(interruptId: string, actionRequests: ActionRequest[], reviewConfigs: ReviewConfig[]): InterruptEvent;
function interrupt(
  interruptId: string,
  actionRequests: ActionRequest[] = [],
  options: { reviewConfigs?: ReviewConfig[] } | ReviewConfig[] = {},
): InterruptEvent {
  const { reviewConfigs = [] } = Array.isArray(options) ? { reviewConfigs: options } : options;
  return {
    type: 'interrupt',
    interrupt_id: interruptId,
    action_requests: actionRequests,
    review_configs: reviewConfigs,
  };
}

function askUser(interruptId: string, questions: AskUserQuestion[], options?: { toolCallId?: string }): AskUserEvent;
/** @deprecated Pass `{ toolCallId }`. */
function askUser(interruptId: string, questions: AskUserQuestion[], toolCallId: string | undefined): AskUserEvent;
function askUser(
  interruptId: string,
  questions: AskUserQuestion[],
  options?: { toolCallId?: string } | string,
): AskUserEvent {
  const { toolCallId = '' } = optionsOf(options, 'toolCallId');
  return { type: 'ask_user', interrupt_id: interruptId, questions, tool_call_id: toolCallId };
}

function done(response: string, options?: { content?: string }): DoneEvent;
/** @deprecated Pass `{ content }`. */
function done(response: string, content: string | undefined): DoneEvent;
function done(response: string, options?: { content?: string } | string): DoneEvent {
  const { content = response } = optionsOf(options, 'content');
  return { type: 'done', content, response };
}

/**
 * Builders of well-formed events as EvoScientist 0.2.x sends them, for
 * marble-test value maps and fixtures. One shape for all: the fields every
 * event of the type has are positional, the rest (ids, instance ids,
 * `success`, …) go in a last options object. Leave an id out to build the
 * shape of an older producer that does not send it.
 *
 * ```ts
 * const values = {
 *   c: events.toolCall('read_file', { path: 'a' }, { id: 'c1' }),
 *   r: events.toolResult('read_file', 'ok', { id: 'c1' }),
 *   s: events.subagentStart('research-agent', { instanceId: 'task:1', toolCallId: 't1' }),
 *   x: events.subagentToolCall('research-agent', 'search', { q: 'x' }, { id: 'call_0', instanceId: 'task:1' }),
 * };
 * ```
 */
export const events = {
  /** A `thinking` event; `id` defaults to `0`, as older producers send. */
  thinking,
  /** A `text` delta. */
  text: (content: string): TextEvent => ({ type: 'text', content }),
  /** A `tool_call`; `args` default to `{}`, `id` to `""`. */
  toolCall,
  /** A `tool_result`; `success` defaults to `true`. */
  toolResult,
  /** A `subagent_start`; `description` defaults to `""`. */
  subagentStart,
  /** A `subagent_tool_call`; `args` default to `{}`, `id` to `""`. */
  subagentToolCall,
  /** A `subagent_tool_result`; `success` defaults to `true`. */
  subagentToolResult,
  /** A `subagent_text`. */
  subagentText,
  /** A `subagent_end`. */
  subagentEnd,
  /** A `panel_dispatch_start`; `subagentType` defaults to `research-agent`, the other strings to `""`. */
  panelDispatchStart,
  /** A `panel_dispatch_complete` after `durationMs` milliseconds; `evalId` defaults to `""`. */
  panelDispatchComplete,
  /** A `panel_dispatch_error` after `durationMs` milliseconds; `evalId` defaults to `""`. */
  panelDispatchError,
  /** A `tool_selection` of these tool names. */
  toolSelection: (tools: string[]): ToolSelectionEvent => ({ type: 'tool_selection', tools }),
  /** A `summarization_start`. */
  summarizationStart: (): SummarizationStartEvent => ({ type: 'summarization_start' }),
  /** A `summarization` with this summary. */
  summarization: (content: string): SummarizationEvent => ({ type: 'summarization', content }),
  /** A `usage_stats` of one model call's input and output tokens. */
  usage: (inputTokens: number, outputTokens: number): UsageStatsEvent => ({
    type: 'usage_stats',
    input_tokens: inputTokens,
    output_tokens: outputTokens,
  }),
  /** An `interrupt`; `actionRequests` and `reviewConfigs` default to `[]`. */
  interrupt,
  /** An `ask_user`; `toolCallId` defaults to `""`. */
  askUser,
  /** An `error` with this message. */
  error: (message: string): ErrorEvent => ({ type: 'error', message }),
  /** A `done`; `content` defaults to `response`. */
  done,
  /** An event of a type this library does not know, as `keepUnknown: true` passes it on. */
  unknown: (type: string, fields: Record<string, unknown> = {}): UnknownEvent => unknownEvent({ ...fields, type }),
};
