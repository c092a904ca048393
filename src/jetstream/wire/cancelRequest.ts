// Why a worker stopped a run's CLI when `cancelRun` asked, as the run's error carries it.
import { CancelledError } from '../../events/errors.js';

/** What a cancel stopped: an attempt in progress, or a run no attempt was running. */
export type CancelPhase = 'queued' | 'running';

/**
 * The reason a worker aborts a run's `signal` with when `cancelRun` asks: it
 * becomes the `cause` of the run's `CancelledError`, which is how the run's
 * `finished` record comes to say `cancelled` (a worker's own signal does not).
 */
export class CancelRequest extends Error {
  static {
    this.prototype.name = 'CancelRequest';
  }

  constructor(readonly phase: CancelPhase) {
    super(phase === 'running' ? 'cancelled while it ran' : 'cancelled before it started');
  }
}

/** What a cancel stopped, if `error` is the end of a run `cancelRun` cancelled. */
export function cancelPhaseOf(error: unknown): CancelPhase | undefined {
  return error instanceof CancelledError && error.cause instanceof CancelRequest ? error.cause.phase : undefined;
}
