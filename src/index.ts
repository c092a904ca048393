// The `evosci-rx` entry: everything, for Node.
export {
  AskUserEvent,
  DecodeError,
  DecodeIssue,
  decodeLine,
  DoneEvent,
  ErrorEvent,
  eventCodecs,
  EvoEvent,
  EvoSciError,
  fromJsonl,
  InterruptEvent,
  JsonlDecoder,
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
  toJsonl,
  UnknownEvent,
  UsageStatsEvent,
} from './events/index.js';
export type { DecodeOptions, EvoEventType, EvoSciErrorDetails, JsonlSink, JsonlSource } from './events/index.js';
export { CancelledError } from './errors/CancelledError.js';
export { ExitError } from './errors/ExitError.js';
export { SpawnError } from './errors/SpawnError.js';
export { TimeoutError } from './errors/TimeoutError.js';
export { TruncatedStreamError } from './errors/TruncatedStreamError.js';
export type { ExitInfo } from './process/ExitInfo.js';
export { run } from './process/run.js';
export type { RunOptions } from './process/RunOptions.js';
export {
  accumulateText,
  groupSubagents,
  ofType,
  pairToolCalls,
  summarize,
  sumUsage,
} from '../operators/index.js';
export type {
  DelegationSummary,
  InvocationSummary,
  RunSummary,
  SubagentEvent,
  SubagentRun,
  ToolInvocation,
  UsageTotals,
} from '../operators/index.js';
