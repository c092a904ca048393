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
} from '../src/events.js';

type Args = Record<string, unknown>;

/** Leaves out the fields whose value is `undefined`, as a producer that does not send them. */
function sent<T extends object>(event: T): T {
  for (const key of Object.keys(event) as (keyof T)[]) if (event[key] === undefined) delete event[key];
  return event;
}

/**
 * Builders of well-formed events as EvoScientist 0.2.x sends them, for
 * marble-test value maps and fixtures. The ids older producers leave out are
 * optional here too: leave them `undefined` to build an older shape.
 *
 * ```ts
 * const values = {
 *   c: events.toolCall('read_file', { path: 'a' }, 'c1'),
 *   r: events.toolResult('read_file', 'ok', { id: 'c1' }),
 *   s: events.subagentStart('research-agent', { instanceId: 'task:1', toolCallId: 't1' }),
 * };
 * ```
 */
export const events = {
  thinking: (content: string, id: string | number = 0): ThinkingEvent => ({ type: 'thinking', content, id }),
  text: (content: string): TextEvent => ({ type: 'text', content }),
  toolCall: (name: string, args: Args = {}, id = ''): ToolCallEvent => ({ type: 'tool_call', name, args, id }),
  /** `id: undefined` leaves the id out, as older producers do. */
  toolResult: (
    name: string,
    content: string,
    { success = true, id }: { success?: boolean; id?: string } = {},
  ): ToolResultEvent => sent({ type: 'tool_result', name, content, success, id }),
  /** The start of a delegation; 0.2.x sends `instanceId` and `toolCallId` (the `task` call), and `description: ""`. */
  subagentStart: (
    name: string,
    {
      description = '',
      instanceId,
      toolCallId,
    }: { description?: string; instanceId?: string; toolCallId?: string } | undefined = {},
  ): SubagentStartEvent =>
    sent({ type: 'subagent_start', name, description, instance_id: instanceId, tool_call_id: toolCallId }),
  subagentToolCall: (
    subagent: string,
    name: string,
    args: Args = {},
    id = '',
    instanceId?: string,
  ): SubagentToolCallEvent => sent({ type: 'subagent_tool_call', subagent, name, args, id, instance_id: instanceId }),
  subagentToolResult: (
    subagent: string,
    name: string,
    content: string,
    { success = true, id, instanceId }: { success?: boolean; id?: string; instanceId?: string } = {},
  ): SubagentToolResultEvent =>
    sent({ type: 'subagent_tool_result', subagent, name, content, success, id, instance_id: instanceId }),
  subagentText: (subagent: string, content: string, instanceId?: string): SubagentTextEvent =>
    sent({ type: 'subagent_text', subagent, content, instance_id: instanceId }),
  subagentEnd: (name: string, instanceId?: string): SubagentEndEvent =>
    sent({ type: 'subagent_end', name, instance_id: instanceId }),
  panelDispatchStart: (
    id: string,
    {
      evalId = '',
      subagentType = 'research-agent',
      label = '',
      description = '',
    }: { evalId?: string; subagentType?: string; label?: string; description?: string } = {},
  ): PanelDispatchStartEvent => ({
    type: 'panel_dispatch_start',
    eval_id: evalId,
    id,
    subagent_type: subagentType,
    label,
    description,
  }),
  panelDispatchComplete: (id: string, durationMs: number, evalId = ''): PanelDispatchCompleteEvent => ({
    type: 'panel_dispatch_complete',
    eval_id: evalId,
    id,
    duration_ms: durationMs,
  }),
  panelDispatchError: (id: string, error: string, durationMs: number, evalId = ''): PanelDispatchErrorEvent => ({
    type: 'panel_dispatch_error',
    eval_id: evalId,
    id,
    duration_ms: durationMs,
    error,
  }),
  toolSelection: (tools: string[]): ToolSelectionEvent => ({ type: 'tool_selection', tools }),
  summarizationStart: (): SummarizationStartEvent => ({ type: 'summarization_start' }),
  summarization: (content: string): SummarizationEvent => ({ type: 'summarization', content }),
  usage: (inputTokens: number, outputTokens: number): UsageStatsEvent => ({
    type: 'usage_stats',
    input_tokens: inputTokens,
    output_tokens: outputTokens,
  }),
  interrupt: (
    interruptId: string,
    actionRequests: ActionRequest[] = [],
    reviewConfigs: ReviewConfig[] = [],
  ): InterruptEvent => ({
    type: 'interrupt',
    interrupt_id: interruptId,
    action_requests: actionRequests,
    review_configs: reviewConfigs,
  }),
  askUser: (interruptId: string, questions: AskUserQuestion[], toolCallId = ''): AskUserEvent => ({
    type: 'ask_user',
    interrupt_id: interruptId,
    questions,
    tool_call_id: toolCallId,
  }),
  error: (message: string): ErrorEvent => ({ type: 'error', message }),
  done: (response: string, content = response): DoneEvent => ({ type: 'done', content, response }),
  /** An event of a type this library does not know, as `keepUnknown: true` passes it on. */
  unknown: (type: string, fields: Args = {}): UnknownEvent => unknownEvent({ ...fields, type }),
};
