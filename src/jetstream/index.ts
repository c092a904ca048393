// The `evosci-rx/jetstream` entry, for Node: runs across machines through NATS JetStream, as the same Observables.
export { ensureStreams, streamConfigs, type EnsureStreamsOptions } from './ensureStreams.js';
export { AttemptSupersededError, BrokerError, DeadLetterError } from './errors.js';
export { fromJetStream, positionOf, type EventPosition, type FromJetStreamOptions } from './fromJetStream.js';
export { layoutOf, type JetStreamLayout, type LayoutOptions } from './layout.js';
export { publishTo, type PublishToOptions } from './publishTo.js';
export {
  DeadLetterRecord,
  deserializeError,
  FinishedRecord,
  Headers,
  SerializedError,
  serializeError,
  StartedRecord,
  StatusRecord,
} from './records.js';
export { serveRuns, type ServeRunsOptions, type WorkerActivity } from './serveRuns.js';
export { RunRequest, submitRun, type SubmitRunOptions } from './submitRun.js';
export { watchRuns, type WatchRunsOptions } from './watchRuns.js';
