/**
 * The `evosci-rx/runs` entry, for Node: runs as resources, started once and followed from anywhere.
 *
 * @module evosci-rx/runs
 */
export { runHub, type RunHubOptions } from './LocalRunHub.js';
export type { FollowOptions, RunHub, StartedRun, StartOptions } from './RunHub.js';
export { REQUEST_FIELDS, type RequestField } from '../process/requestedOptions.js';
export type { RunPolicy } from './policy.js';
export {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  IdempotencyKeyReusedError,
  RunHubError,
  RunInterruptedError,
  RunRequestError,
  RunRestartedError,
  UnknownRunError,
} from './errors.js';
export { FollowGaveUpError } from './Outage.js';
export { errorOfEnd, runEndOf } from './runEnd.js';
export { afterOf, hasSeenEnd } from './lastEventId.js';
export { toMessageEvents, type MessageEvent, type MessageEventsOptions } from './toMessageEvents.js';
export { runsHandler, type RunsHandlerOptions, type RunsRequestHandler } from './http/runsHandler.js';
export { RequestGuard, type GuardOptions } from './http/RequestGuard.js';
export { requestTarget, type RequestTarget } from './http/requestTarget.js';
export { RunEnd, RunErrorInfo, RunState, RunStatus, StartRequest, type EndState, type IndexedEvent } from './wire.js';
