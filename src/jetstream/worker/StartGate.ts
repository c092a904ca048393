import { catchError, defer, switchMap, throwError, type Observable } from 'rxjs';
import type { EvoEvent } from '../../events/codecs.js';
import { FlowControl } from '../../common/FlowControl.js';
import { run, type RunOptions } from '../../process/run.js';
import { cancelledError } from '../../runs/runEnd.js';
import { CancelRequest, cancelPhaseOf } from '../wire/cancelRequest.js';

/**
 * Holds one attempt's CLI until the attempt's `started` record is stored and
 * no cancel of its run is (and its stdout while the broker is behind): the check that keeps a cancelled run from ever
 * starting. A cancel stored before that record is seen by `admit`; one stored
 * after it is delivered to the worker, which calls `cancel`. Either way
 * `run()` ends with a `CancelledError` whose cause is a `CancelRequest`:
 * before its CLI started, or after stopping it as unsubscribing does
 * (SIGINT, then SIGTERM and SIGKILL on its process group). That error says
 * what the cancel stopped as every run hub says it (`cancelledError`).
 */
export class StartGate {
  /**
   * The tap of the CLI's stdout, for `publishTo`: paused while the broker is
   * behind, so that a slow link slows the CLI down instead of failing the run.
   */
  readonly flow = new FlowControl();
  private readonly abort = new AbortController();
  private readonly opened: Promise<void>;
  private open: () => void = () => undefined;
  /** Whether the CLI was let start: a cancel then stops a running attempt. */
  private admitted = false;

  constructor() {
    this.opened = new Promise<void>((resolve) => (this.open = resolve));
  }

  /**
   * `run()` of these options (checked now) for attempt `attempt` of run
   * `runId`, its CLI started once `admit` lets it, stopped by `cancel`.
   */
  hold(options: RunOptions, runId: string, attempt: number): Observable<EvoEvent> {
    const signal = options.signal ? AbortSignal.any([options.signal, this.abort.signal]) : this.abort.signal;
    const run$ = run({ ...options, signal, lifeline: true, flow: this.flow });
    return defer(() => this.opened).pipe(
      switchMap(() => run$),
      catchError((err: unknown) => throwError(() => cancelledAs(err, runId, attempt))),
    );
  }

  /**
   * The `started` record is stored: lets the CLI start, or, if a cancel is
   * stored, lets `run()` end at once without starting it. Rejects if the check
   * fails; the CLI is then still held.
   */
  async admit(cancelStored: () => Promise<boolean>): Promise<void> {
    if (await cancelStored()) this.cancel();
    this.admitted = true;
    this.open();
  }

  /** A cancel of the run: its CLI is not started, or is stopped. */
  cancel(): void {
    if (!this.abort.signal.aborted) this.abort.abort(new CancelRequest(this.admitted ? 'running' : 'queued'));
  }
}

/** The error of a run this gate's cancel stopped, as a hub says it (its cause still the `CancelRequest`); any other as it is. */
function cancelledAs(error: unknown, runId: string, attempt: number): unknown {
  const phase = cancelPhaseOf(error);
  if (phase === undefined) return error;
  const stopped = phase === 'running' ? 'running' : attempt > 1 ? 'requeued' : 'queued';
  return cancelledError(runId, stopped, (error as Error).cause);
}
