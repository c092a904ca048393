import type { NatsConnection } from '@nats-io/transport-node';
import { EvoSciError } from '../events/errors.js';
import { DEFAULTS } from './wire/defaults.js';
import { retried } from './wire/backoff.js';
import { BrokerError, brokerError } from './wire/errors.js';
import { EndWatch, type EndRecord } from './read/EndWatch.js';
import { checkRunId, layoutOf, type JetStreamLayout, type LayoutOptions } from './wire/layout.js';
import { serverOf } from './wire/clients.js';
import { publishStored } from './write/publishStored.js';
import { RunHeaders, utf8, type DeadLetterRecord, type FinishedRecord, type StatusRecord } from './wire/records.js';
import { readStatus } from './read/status.js';
import { above } from '../common/checks.js';

/** Options of `cancelRun`. */
export interface CancelRunOptions extends LayoutOptions {
  /**
   * How long to wait for the run's end to be recorded. Default 60 s: a
   * running CLI has its SIGINT clean-up and `killGraceMs` ladder, and a run
   * whose worker died waits for the request's ack wait.
   */
  readonly timeoutMs?: number;
}

/**
 * What a cancel did:
 * - `cancelled-queued`: no attempt was running (the run never started, or its
 *   worker had died), and none will start;
 * - `cancelled-running`: the attempt in progress was stopped;
 * - `already-ended`: the run had finished or been dead-lettered on its own, and is unchanged.
 */
export type CancelResult = 'cancelled-queued' | 'cancelled-running' | 'already-ended';

/** What `cancelRun` resolves to: what the cancel did, and the run's final status record. */
export interface CancelOutcome {
  /** What the cancel did: see `CancelResult`. */
  readonly result: CancelResult;
  /** For a cancel, a `finished` record: `failed`, a serialized `CancelledError`, and `cancelled` saying what it stopped. */
  readonly record: FinishedRecord | DeadLetterRecord;
}

/**
 * Cancels a run on whichever worker holds it, and resolves once its end is
 * recorded. A run still queued never starts, on any worker, now or on a later
 * delivery of its request; a run in progress is stopped as unsubscribing from
 * `run()` stops it (SIGINT, then SIGTERM and SIGKILL on its process group),
 * its request acknowledged, not run again. Either way its `finished` record
 * fails it with a `CancelledError`, which `fromJetStream` followers end with,
 * and `watchRuns` shows. A run that has ended is left as it is; cancelling
 * again, or twice at once, resolves to the same outcome.
 *
 * It stores a cancel on `<prefix>.run.<runId>.cancel` (the only subject a
 * submitter writes besides requests); workers record the end. A run id not
 * submitted yet is cancelled in advance. Its broker calls are tried again
 * while the broker does not answer (a leader election, a link that comes
 * back), as publishes are, for up to 30 s of the call, and no longer than
 * `timeoutMs`. Rejects with `BrokerError` if the broker fails, or if no
 * worker records the end within `timeoutMs` (the cancel then stays stored,
 * and takes effect when a worker takes the request).
 *
 * ```ts
 * const { result, record } = await cancelRun(nc, runId, { prefix });
 * console.log(result); // 'cancelled-running'; record.error.class === 'CancelledError'
 * ```
 */
export async function cancelRun(
  nc: NatsConnection,
  runId: string,
  options: CancelRunOptions = {},
): Promise<CancelOutcome> {
  checkRunId(runId);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.cancelTimeoutMs;
  above('cancelRun', 'timeoutMs', timeoutMs, 0);
  const layout = layoutOf(options);
  const cancel = new RunCancel(nc, layout, runId, { timeoutMs, retryForMs: Math.min(DEFAULTS.retryForMs, timeoutMs) });
  const status = await cancel.call(`read the status of run ${runId} from stream ${layout.eventsStream}`, () =>
    readStatus(nc, layout, runId),
  );
  const ended = outcomeOf(status?.record);
  if (ended) return ended;
  await cancel.store();
  const end = await cancel.end(status?.sequence);
  if (end) return outcomeOf(end)!;
  throw new BrokerError(
    `run ${runId}: its cancel is stored on ${layout.cancelSubject(runId)} of ${serverOf(nc)}, but no worker recorded the run's end within timeoutMs; it takes effect when a worker takes its request`,
  );
}

/** The outcome a status record gives, if it ends the run. */
function outcomeOf(record: StatusRecord | undefined): CancelOutcome | undefined {
  if (record?.record === 'dead-letter') return { result: 'already-ended', record };
  if (record?.record !== 'finished') return undefined;
  const result = record.cancelled === undefined ? 'already-ended' : (`cancelled-${record.cancelled}` as const);
  return { result, record };
}

/** How long a cancel waits for the run's end, and for how long its broker calls are tried again. */
export interface CancelTiming {
  readonly timeoutMs: number;
  readonly retryForMs: number;
}

/**
 * One cancel of a run: every broker call of it (reading the run, storing the
 * cancel, starting the watch of its end) is tried again while the broker
 * does not answer, as a publish is, within one budget counted from the
 * cancel's start (`retryForMs`: a leader election, a link that comes back),
 * and its wait for the run's end ends `timeoutMs` after that start.
 */
export class RunCancel {
  private readonly retryUntil: number;
  private readonly deadline: number;
  private readonly ackTimeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly layout: JetStreamLayout,
    private readonly runId: string,
    timing: CancelTiming,
  ) {
    const now = Date.now();
    this.retryUntil = now + timing.retryForMs;
    this.deadline = now + timing.timeoutMs;
    this.ackTimeoutMs = Math.max(1, Math.min(DEFAULTS.ackTimeoutMs, timing.retryForMs));
  }

  /** A broker call of the cancel, tried again within its budget; `BrokerError` saying `what` failed if it never answers. */
  call<T>(what: string, read: () => Promise<T>): Promise<T> {
    return retried(this.nc, read, this.retryUntil).catch((err: unknown) => {
      throw EvoSciError.is(err) ? err : brokerError(this.nc, `could not ${what}`, err);
    });
  }

  /** Stores the cancel, where workers see it: one id for every cancel of the run, so that cancels at once store one. */
  async store(): Promise<void> {
    const { runId } = this;
    await publishStored(
      this.nc,
      { subject: this.layout.cancelSubject(runId), msgID: `${runId}.cancel`, headers: { [RunHeaders.runId]: runId } },
      utf8.encode(JSON.stringify({ runId, at: new Date().toISOString() })),
      { ackTimeoutMs: this.ackTimeoutMs, retryForMs: Math.max(0, this.retryUntil - Date.now()) },
    );
  }

  /** The record that ends the run, read from its status sequence `from` on; `undefined` once the cancel's timeout passes. */
  end(from: number | undefined): Promise<EndRecord | undefined> {
    return new EndWatch(this.nc, this.layout, this.runId).wait(from, this.deadline, this.retryUntil);
  }
}
