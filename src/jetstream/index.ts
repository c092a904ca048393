// The `evosci-rx/jetstream` entry, for Node: runs across machines through NATS JetStream, as the same Observables.
export { cancelRun, type CancelOutcome, type CancelResult, type CancelRunOptions } from './cancelRun.js';
export { ensureStreams, streamConfigs, type EnsureStreamsOptions } from './ensureStreams.js';
export { AttemptSupersededError, BrokerError, DeadLetterError, StorageLimitError } from './errors.js';
export { fromJetStream, type FromJetStreamOptions } from './fromJetStream.js';
export { positionOf, type EventPosition } from './positions.js';
export { layoutOf, type JetStreamLayout, type LayoutOptions } from './layout.js';
export { publishTo, type PublishToOptions } from './publishTo.js';
export {
  DeadLetterRecord,
  deserializeError,
  FinishedRecord,
  RunHeaders,
  SerializedError,
  serializeError,
  StartedRecord,
  StatusRecord,
} from './records.js';
export { serveRuns, type ServeRunsOptions } from './serveRuns.js';
export type { PipeRun, WorkerActivity } from './workerTypes.js';
export type { RequestHeaders } from './requestHeaders.js';
export { RunRequest, submitRun, type SubmitRunOptions } from './submitRun.js';
export { watchRuns, type WatchRunsOptions } from './watchRuns.js';
export { jetStreamRunHub, type JetStreamRunHubOptions } from './jetStreamRunHub.js';
