/**
 * The `evosci-rx/jetstream` entry, for Node: runs across machines through NATS JetStream, as the same Observables.
 *
 * @module evosci-rx/jetstream
 */
export { cancelRun, type CancelOutcome, type CancelResult, type CancelRunOptions } from './cancelRun.js';
export {
  ensureStreams,
  streamConfigs,
  type ChangedField,
  type EnsuredStreams,
  type EnsureStreamsOptions,
  type StreamChange,
} from './ensureStreams.js';
export { AttemptSupersededError, BrokerError, DeadLetterError, StorageLimitError } from './wire/errors.js';
export { fromJetStream, type FromJetStreamOptions } from './read/fromJetStream.js';
export { positionOf, type EventPosition } from './wire/positions.js';
export { layoutOf, type JetStreamLayout, type LayoutOptions } from './wire/layout.js';
export { publishTo, type PublishToOptions, type WorkerPublishOptions } from './write/publishTo.js';
export {
  DeadLetterRecord,
  deserializeError,
  FinishedRecord,
  RunHeaders,
  SerializedError,
  serializeError,
  StartedRecord,
  StatusRecord,
} from './wire/records.js';
export { serveRuns, type ServeRunsOptions } from './worker/serveRuns.js';
export type { PipeRun, WorkerActivity } from './worker/workerTypes.js';
export type { RequestHeaders } from './wire/requestHeaders.js';
export { RunRequest } from './wire/runRequest.js';
export { submitRun, type SubmitRunOptions } from './write/submitRun.js';
export { watchRuns, type WatchRunsOptions } from './read/watchRuns.js';
export { jetStreamRunHub, type JetStreamRunHubOptions } from './jetStreamRunHub.js';
export type { CancelPhase } from './wire/cancelRequest.js';
