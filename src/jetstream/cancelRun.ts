import type { NatsConnection } from '@nats-io/transport-node';
import { DEFAULTS } from './wire/defaults.js';
import { BrokerError, brokerError } from './wire/errors.js';
import { OrderedReader } from './read/OrderedReader.js';
import { checkRunId, layoutOf, type JetStreamLayout, type LayoutOptions } from './wire/layout.js';
import { serverOf } from './wire/clients.js';
import { publishStored } from './write/publishStored.js';
import {
  decodeRecord,
  RunHeaders,
  utf8,
  type DeadLetterRecord,
  type FinishedRecord,
  type StatusRecord,
} from './wire/records.js';
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
 * submitted yet is cancelled in advance. Rejects with `BrokerError` if the
 * broker fails, or if no worker records the end within `timeoutMs` (the
 * cancel then stays stored, and takes effect when a worker takes the request).
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
  const deadline = Date.now() + timeoutMs;
  const status = await readStatus(nc, layout, runId).catch((err: unknown) => {
    throw brokerError(nc, `could not read the status of run ${runId} from stream ${layout.eventsStream}`, err);
  });
  const ended = outcomeOf(status?.record);
  if (ended) return ended;
  await publishStored(
    nc,
    // One id for every cancel of the run: cancels at once store one.
    { subject: layout.cancelSubject(runId), msgID: `${runId}.cancel`, headers: { [RunHeaders.runId]: runId } },
    utf8.encode(JSON.stringify({ runId, at: new Date().toISOString() })),
    { ackTimeoutMs: Math.min(DEFAULTS.ackTimeoutMs, timeoutMs), retryForMs: Math.max(0, deadline - Date.now()) },
  );
  return new EndWatch(nc, layout, runId).wait(status?.sequence, deadline);
}

/** The outcome a status record gives, if it ends the run. */
function outcomeOf(record: StatusRecord | undefined): CancelOutcome | undefined {
  if (record?.record === 'dead-letter') return { result: 'already-ended', record };
  if (record?.record !== 'finished') return undefined;
  const result = record.cancelled === undefined ? 'already-ended' : (`cancelled-${record.cancelled}` as const);
  return { result, record };
}

/** Reads a run's status records from the one last read until one ends the run, or the deadline passes. */
class EndWatch {
  private following: OrderedReader | undefined;
  private done = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly layout: JetStreamLayout,
    private readonly runId: string,
  ) {}

  wait(fromSequence: number | undefined, deadline: number): Promise<CancelOutcome> {
    return new Promise<CancelOutcome>((resolve, reject) => {
      const end = (outcome: CancelOutcome | Error) => {
        if (this.done) return;
        this.done = true;
        clearTimeout(this.timer);
        this.following?.stop();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      this.timer = setTimeout(() => end(this.timedOut()), Math.max(0, deadline - Date.now()));
      OrderedReader.start(
        this.nc,
        this.layout.eventsStream,
        this.layout.statusSubject(this.runId),
        fromSequence === undefined ? { from: 'start' } : { from: 'sequence', sequence: fromSequence },
        (message) => {
          const outcome = outcomeOf(decodeRecord(message.data));
          if (outcome) end(outcome);
        },
        end,
      ).then(
        (following) => {
          this.following = following;
          if (this.done) following.stop();
        },
        (err: unknown) => end(err instanceof Error ? err : new BrokerError(String(err))),
      );
    });
  }

  private timedOut(): BrokerError {
    return new BrokerError(
      `run ${this.runId}: its cancel is stored on ${this.layout.cancelSubject(this.runId)} of ${serverOf(this.nc)}, but no worker recorded the run's end within timeoutMs; it takes effect when a worker takes its request`,
    );
  }
}
