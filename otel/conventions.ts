// The names a trace of a run uses: OpenTelemetry GenAI semantic conventions v1.41.0
// (docs/gen-ai/gen-ai-agent-spans.md, gen-ai-spans.md, gen-ai-metrics.md), and the
// `evosci.*` attributes for what those conventions have no name for.

/** The version of the semantic conventions these names follow. */
export const SEMCONV_VERSION = '1.41.0';

export const AttributeName = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  agentDescription: 'gen_ai.agent.description',
  conversationId: 'gen_ai.conversation.id',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
  /** How the run ended, as `summarize()` says: completed, needs-input, failed, incomplete. */
  outcome: 'evosci.run.outcome',
  /** How a call ended: succeeded, failed, awaiting-input (the run stopped to ask about it), unfinished. */
  toolStatus: 'evosci.tool.status',
  /** The sub-agent that made a call; absent for the main agent's. */
  subagent: 'evosci.subagent.name',
  instanceId: 'evosci.subagent.instance_id',
  /** Whether a delegation's `subagent_end` arrived before the stream ended. */
  subagentEnded: 'evosci.subagent.ended',
  panelId: 'evosci.panel.id',
  panelLabel: 'evosci.panel.label',
  panelStatus: 'evosci.panel.status',
  panelDurationMs: 'evosci.panel.duration_ms',
} as const;

export const Operation = { invokeAgent: 'invoke_agent', executeTool: 'execute_tool' } as const;

/** `error.type` values of this instrumentation, besides an error's class name when the run's Observable errors. */
export const ErrorType = {
  /** A tool result with `success: false`. */
  tool: 'tool_error',
  /** A `panel_dispatch_error`. */
  panel: 'panel_dispatch_error',
  /** The stream carried an `error` event. */
  agent: 'agent_error',
  /**
   * The run was unsubscribed before its `done` (`take(5)`, a closed page): it
   * ended without its result, which the conventions count as failed, as gRPC's
   * CANCELLED is a client's error.
   */
  cancelled: 'cancelled',
} as const;

export const Metric = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
} as const;

/** The bucket boundaries the conventions advise for each histogram. */
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
export const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
