import type { NatsConnection } from '@nats-io/transport-node';
import type { Observable } from 'rxjs';
import type { EvoEvent } from '../../events/codecs.js';
import type { ExitInfo } from '../../process/run.js';
import { AttemptRun, type Attempt, type WorkerHooks } from './AttemptRun.js';
import { recordQueuedCancel } from './cancelled.js';
import type { CancelWatch } from './CancelWatch.js';
import { StatusMovedError } from '../wire/errors.js';
import { publishStored } from '../write/publishStored.js';
import { requestHeadersOf } from '../wire/requestHeaders.js';
import { encodeRecord, RunHeaders, type DeadLetterRecord } from '../wire/records.js';
import { parseRequest, refusedField, requestRunOptions } from './requests.js';
import { cancelRequested, readStatus, requestPending, type StoredStatus } from '../read/status.js';
import { StartGate } from './StartGate.js';
import { ThreadRecord } from './ThreadRecord.js';
import type { WorkerActivity, WorkerSettings } from './workerTypes.js';
import type { RequestDelivery } from './RequestDelivery.js';

/**
 * Takes each request a worker pulls: refuses one that cannot be run,
 * skips a run that has ended or is in progress under another request,
 * records the end of one cancelled before it started, numbers the attempt
 * from the run's status, runs it through `publishTo` (its CLI held until its
 * `started` record is stored and no cancel is) and settles the request with
 * the server when the attempt ends. Holds the requests in progress, by their
 * stream sequence.
 */
export class RequestHandler {
  private readonly active = new Map<number, AttemptRun>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: WorkerSettings,
    private readonly hooks: WorkerHooks,
    private readonly cancels: CancelWatch,
  ) {}

  /** Resolves once the request is settled, or its run has ended. */
  async handle(msg: RequestDelivery): Promise<void> {
    const parsed = parseRequest(msg);
    if ('reason' in parsed) {
      await this.deadLetter(parsed.runId, parsed.reason, 0, 0);
      msg.term(parsed.reason);
      return;
    }
    const { runId } = parsed.request;
    const status = await readStatus(this.nc, this.settings.layout, runId);
    if (await this.alreadyHandled(msg, runId, status)) return;
    if (await this.cancelledBefore(msg, runId, status)) return;
    const last = status?.record;
    const refusal = refusedField(this.settings, parsed.request);
    if (refusal !== undefined) {
      // Recorded on a run of its own only: one without records, or one this request started.
      const own = status === undefined || (last?.record === 'started' && last.request === msg.seq);
      await this.deadLetter(runId, refusal, 0, own ? (status?.sequence ?? 0) : 0);
      msg.term(refusal);
      return;
    }
    // Attempts are numbered by the started records, never by the delivery count. The server
    // counts every delivery, and a delivery can reach a worker that never starts it: a worker
    // whose confirmation reached the server after ackWaitMs receives the request again on its
    // own waiting pull, and can die before it writes that attempt's start; a worker can also
    // be killed, or stop, between taking a request and starting it. Each such delivery pushes
    // the count past the attempts started, so a count-based number skips. The started record
    // is stored only while the status read here is still the last (see publishTo), so two
    // writers never both start one attempt, and numbers are exact: 1, 2, 3.
    const attempt = {
      request: parsed.request,
      number: last?.record === 'started' ? last.attempt + 1 : 1,
      fence: status?.sequence ?? 0,
    };
    if (attempt.number > this.settings.maxAttempts) {
      const lastWorker = last?.record === 'started' && last.worker ? `, last on ${last.worker}` : '';
      const reason = `its worker stopped before the run finished in each of ${this.settings.maxAttempts} attempts${lastWorker}`;
      await this.deadLetter(runId, reason, this.settings.maxAttempts, attempt.fence);
      await msg.ackAck().catch(() => undefined);
      return;
    }
    await this.start(msg, attempt);
  }

  /** Keeps a delivery of a request this worker is running (a redelivery); `false` for any other. */
  adoptIfRunning(msg: RequestDelivery): boolean {
    const running = this.active.get(msg.seq);
    running?.adopt(msg);
    return running !== undefined;
  }

  /** Reports what the worker did with a request outside its handling. */
  report(activity: WorkerActivity): void {
    this.hooks.emit(activity);
  }

  /** Stops every run in progress and hands its request back. */
  stopAll(): void {
    for (const entry of this.active.values()) entry.stop();
    this.active.clear();
  }

  /** Whether the run has ended, or runs under another request still in the queue: then it is acknowledged unrun. */
  private async alreadyHandled(
    msg: RequestDelivery,
    runId: string,
    status: StoredStatus | undefined,
  ): Promise<boolean> {
    const last = status?.record;
    let skip: { attempt: number; reason: string } | undefined;
    if (last?.record === 'finished') skip = { attempt: last.attempt, reason: 'run already finished' };
    else if (last?.record === 'dead-letter') skip = { attempt: last.attempts, reason: 'run already dead-lettered' };
    else if (
      last?.record === 'started' &&
      last.request !== undefined &&
      last.request !== msg.seq &&
      (await requestPending(this.nc, this.settings.layout, last.request))
    )
      skip = { attempt: last.attempt, reason: `run already in progress (attempt ${last.attempt})` };
    if (!skip) return false;
    // Its end was recorded but the ack was lost, or the same run id was submitted again.
    await msg.ackAck().catch(() => undefined);
    this.hooks.emit({ type: 'skipped', runId, ...skip });
    return true;
  }

  /** A run cancelled before this attempt: its end recorded (unless another worker did), its request acknowledged unrun. */
  private async cancelledBefore(
    msg: RequestDelivery,
    runId: string,
    status: StoredStatus | undefined,
  ): Promise<boolean> {
    if (!(await cancelRequested(this.nc, this.settings.layout, runId))) return false;
    const record = await recordQueuedCancel(this.nc, this.settings, runId, status);
    await msg.ackAck().catch(() => undefined);
    if (record) this.hooks.emit({ type: 'cancelled', runId, attempt: record.attempt, phase: 'queued' });
    else this.hooks.emit({ type: 'skipped', runId, attempt: 0, reason: 'run cancelled, its end recorded by another' });
    return true;
  }

  /** Starts the attempt, or dead-letters a request whose options `run()` refuses. */
  private async start(msg: RequestDelivery, attempt: Attempt): Promise<void> {
    // Stopped while the request was being looked at: it goes back, and no CLI starts.
    if (this.hooks.isStopped()) return msg.nak();
    const { runId } = attempt.request;
    const gate = new StartGate();
    const thread = new ThreadRecord(this.nc, this.settings, runId);
    let prompt: string;
    let events$: Observable<EvoEvent>;
    try {
      const runOptions = requestRunOptions(this.settings, attempt.request, attempt.number);
      prompt = runOptions.prompt;
      const onExit = (info: ExitInfo) => {
        thread.exited(info.threadId);
        runOptions.onExit?.(info);
      };
      events$ = gate.hold({ ...runOptions, onExit }, runId, attempt.number);
      const { pipeRun } = this.settings;
      const headers = requestHeadersOf(msg.headers);
      if (pipeRun) events$ = pipeRun(events$, { runId, attempt: attempt.number, headers });
    } catch (err) {
      await this.deadLetter(runId, `the request cannot be run: ${(err as Error).message}`, 0, attempt.fence);
      msg.term();
      return;
    }
    const context = { nc: this.nc, settings: this.settings, hooks: this.hooks, cancels: this.cancels };
    const run = new AttemptRun(context, msg, attempt, gate, () => this.active.delete(msg.seq));
    this.active.set(msg.seq, run);
    run.start(prompt, events$, thread);
    await run.settled;
  }

  /**
   * Writes a dead-letter record, only while `fence` is still the last
   * sequence of the run's status (0: the run has none), so that it never
   * lands on a run this request does not own.
   */
  private async deadLetter(runId: string | undefined, reason: string, attempts: number, fence: number): Promise<void> {
    let recorded = runId !== undefined;
    if (runId !== undefined) {
      const record: DeadLetterRecord = { record: 'dead-letter', runId, at: new Date().toISOString(), attempts, reason };
      await publishStored(
        this.nc,
        {
          subject: this.settings.layout.statusSubject(runId),
          msgID: `${runId}.dead-letter`,
          headers: { [RunHeaders.runId]: runId, [RunHeaders.record]: 'dead-letter' },
          expectLastSequence: fence,
        },
        encodeRecord(record),
        this.settings.timing,
      ).catch((err: unknown) => {
        if (!(err instanceof StatusMovedError)) throw err;
        recorded = false;
      });
    }
    const note = recorded || runId === undefined ? '' : ` (not recorded: run ${runId} has records of another request)`;
    this.hooks.emit({ type: 'dead-lettered', runId, reason: `${reason}${note}` });
  }
}
