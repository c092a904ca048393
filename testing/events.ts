import type {
  AskUserEvent,
  DoneEvent,
  ErrorEvent,
  InterruptEvent,
  SubagentEndEvent,
  SubagentStartEvent,
  SubagentTextEvent,
  SubagentToolCallEvent,
  SubagentToolResultEvent,
  SummarizationEvent,
  SummarizationStartEvent,
  TextEvent,
  ThinkingEvent,
  ToolCallEvent,
  ToolResultEvent,
  ToolSelectionEvent,
  UsageStatsEvent,
} from '../src/events.js';

type Args = Record<string, unknown>;

/** Omits `id` when it is `undefined`, as an older producer does. */
const withId = <T extends object>(event: T, id: string | undefined) => (id === undefined ? event : { ...event, id });

/**
 * Builders of well-formed events, for marble-test value maps and fixtures:
 *
 * ```ts
 * const values = { c: events.toolCall('read_file', { path: 'a' }, 'c1'), r: events.toolResult('read_file', 'ok', { id: 'c1' }) };
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
  ): ToolResultEvent => withId({ type: 'tool_result' as const, name, content, success }, id),
  subagentStart: (name: string, description = ''): SubagentStartEvent => ({
    type: 'subagent_start',
    name,
    description,
  }),
  subagentToolCall: (subagent: string, name: string, args: Args = {}, id = ''): SubagentToolCallEvent => ({
    type: 'subagent_tool_call',
    subagent,
    name,
    args,
    id,
  }),
  subagentToolResult: (
    subagent: string,
    name: string,
    content: string,
    { success = true, id }: { success?: boolean; id?: string } = {},
  ): SubagentToolResultEvent => withId({ type: 'subagent_tool_result' as const, subagent, name, content, success }, id),
  subagentText: (subagent: string, content: string, instanceId?: string): SubagentTextEvent =>
    instanceId === undefined
      ? { type: 'subagent_text', subagent, content }
      : { type: 'subagent_text', subagent, content, instance_id: instanceId },
  subagentEnd: (name: string): SubagentEndEvent => ({ type: 'subagent_end', name }),
  toolSelection: (tools: string[]): ToolSelectionEvent => ({ type: 'tool_selection', tools }),
  summarizationStart: (): SummarizationStartEvent => ({ type: 'summarization_start' }),
  summarization: (content: string): SummarizationEvent => ({ type: 'summarization', content }),
  usage: (inputTokens: number, outputTokens: number): UsageStatsEvent => ({
    type: 'usage_stats',
    input_tokens: inputTokens,
    output_tokens: outputTokens,
  }),
  interrupt: (interruptId: string, actionRequests: unknown[] = [], reviewConfigs: unknown[] = []): InterruptEvent => ({
    type: 'interrupt',
    interrupt_id: interruptId,
    action_requests: actionRequests,
    review_configs: reviewConfigs,
  }),
  askUser: (interruptId: string, questions: unknown[], toolCallId = ''): AskUserEvent => ({
    type: 'ask_user',
    interrupt_id: interruptId,
    questions,
    tool_call_id: toolCallId,
  }),
  error: (message: string): ErrorEvent => ({ type: 'error', message }),
  done: (response: string, content = response): DoneEvent => ({ type: 'done', content, response }),
};
