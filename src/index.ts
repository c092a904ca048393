// The `evosci-rx/events` entry: codecs, decoding, encoding and the error family. No Node built-ins: safe in a browser.
export {
  ActionRequest,
  AskUserEvent,
  AskUserQuestion,
  DoneEvent,
  ErrorEvent,
  eventCodecs,
  EvoEvent,
  InterruptEvent,
  isKnownEvent,
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
  ReviewConfig,
  SubagentEndEvent,
  SubagentStartEvent,
  SubagentTextEvent,
  SubagentToolCallEvent,
  SubagentToolResultEvent,
  SummarizationEvent,
  SummarizationStartEvent,
  TextEvent,
  ThinkingEvent,
  TokenCount,
  ToolCallEvent,
  ToolResultEvent,
  ToolSelectionEvent,
  UnknownEvent,
  unknownEvent,
  UsageStatsEvent,
  type EvoEventType,
} from './events.js';
export { decodeLine } from './decode/decodeLine.js';
export type { DecodeOptions } from './decode/JsonlDecoder.js';
export { fromJsonl, toJsonl, type JsonlOptions, type JsonlSource } from './decode/jsonl.js';
export { eachEvent, type EachEventOptions } from './flow/eachEvent.js';
export { FlowControl } from './FlowControl.js';
export type { FlowSource } from './flow/ObservableByteSource.js';
export { toJsonlStream } from './flow/toJsonlStream.js';
export { toSseStream, type SseOptions } from './flow/toSseStream.js';
export { followRun, type FollowRunOptions } from './runs/followRun.js';
export { ForgottenRunError, RunHubError, RunInterruptedError, UnknownRunError } from './runs/errors.js';
export { RunEnd, RunStatus, type IndexedEvent } from './runs/wire.js';
export {
  CancelledError,
  DecodeError,
  DecodeIssue,
  EvoSciError,
  ExitError,
  SpawnError,
  TimeoutError,
  TruncatedStreamError,
  type EvoSciErrorDetails,
} from './errors.js';
