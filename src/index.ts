/**
 * The `evosci-rx/events` entry: the events' room, with the flow helpers and the client of a hub's runs that a page
 * needs. No Node built-ins: safe in a browser.
 *
 * @module evosci-rx/events
 */
export * from './events/index.js';
// The flow helpers' own entry is `evosci-rx/flow`; they stay here too, for code written before it.
export {
  eachEvent,
  FlowControl,
  toJsonlStream,
  toSseStream,
  type EachEventOptions,
  type FlowSource,
  type SseOptions,
} from './flow/index.js';
export { followRun, type FollowRunOptions, type RefollowRunOptions, type RunRestart } from './runs/followRun.js';
export { FollowGaveUpError } from './runs/Outage.js';
export {
  ForgottenRunError,
  RunHubError,
  RunInterruptedError,
  RunRestartedError,
  UnknownRunError,
} from './runs/errors.js';
export { RunEnd, RunStatus, type IndexedEvent } from './runs/wire.js';
