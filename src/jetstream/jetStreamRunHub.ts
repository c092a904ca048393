import type { NatsConnection } from '@nats-io/transport-node';
import { catchError, defer, filter, from, map, mergeMap, of, throwError, type Observable } from 'rxjs';
import type { DecodeIssue } from '../events/errors.js';
import {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  IdempotencyKeyReusedError,
  RunRequestError,
  RunRestartedError,
  UnknownRunError,
} from '../runs/errors.js';
import { allowedFields, checkIdempotencyKey, checkStartRequest, fingerprintOf } from '../runs/policy.js';
import type { RequestField } from '../process/requestedOptions.js';
import type { FollowOptions, RunHub, StartedRun, StartOptions } from '../runs/RunHub.js';
import { newRunId, RUN_ID } from '../runs/runId.js';
import type { IndexedEvent, RunStatus, StartRequest } from '../runs/wire.js';
import { RunCancel } from './cancelRun.js';
import { DEFAULTS } from './wire/defaults.js';
import { AttemptSupersededError, brokerError, isNotFound } from './wire/errors.js';
import { fromJetStream } from './read/fromJetStream.js';
import { layoutOf, type JetStreamLayout, type LayoutOptions } from './wire/layout.js';
import { clientsOf } from './wire/clients.js';
import { readStatus } from './read/status.js';
import { readSubmitted, storeSubmitted, type SubmittedRecord } from './write/submitted.js';
import { submitRun } from './write/submitRun.js';
import { checkSecret, HubSecret, keyedRunId } from './keyedIds.js';
import { readRunRecords, runStatusOf, type RunRecords } from './runStatusOf.js';
import { wholeAtLeast } from '../common/checks.js';
import { InFlight } from '../common/InFlight.js';
import { SHARED_READ_BYTES, SharedReadings } from '../runs/SharedReadings.js';
import { positionOf } from './wire/positions.js';

/** Options of `jetStreamRunHub`. */
export interface JetStreamRunHubOptions extends LayoutOptions {
  /**
   * The fields a request may set besides its prompt and resume, as the
   * workers' `allowFromRequest` takes them: refused here (400) rather than
   * dead-lettered there. Default none.
   */
  readonly allowFromRequest?: readonly RequestField[] | undefined;
  /**
   * Requests waiting in the work queue (or held by a worker), as the workers'
   * consumer counts them, past which a start is refused. Default 1000.
   */
  readonly maxQueued?: number | undefined;
  /**
   * Milliseconds `cancel` waits for the worker holding a run to record its
   * end. Default 60 s. Past it, `cancel` answers with the run's status as it
   * stands (running, the cancel pending in `cancelRequestedAt`); the cancel
   * stays stored, and the worker stops the run at its next confirmation, or
   * the next worker to take its request records its end. A queued run's
   * cancel answers at once.
   */
  readonly cancelTimeoutMs?: number | undefined;
  /**
   * The secret mixed into the run id of an idempotency key (HMAC-SHA256), so
   * that no one without it computes the id of another's keyed run: at least
   * 32 bytes with some 128 bits of entropy (`randomBytes(32)`, or its hex or
   * base64), the same on every hub that should name the same runs. Default:
   * the secret every hub of the prefix shares from the hub stream, which the
   * first hub to need it stores (the hub's NATS user needs its rights).
   */
  readonly idSecret?: string | Uint8Array | undefined;
  /** The most runs `list()` reports, the newest. Default 1000. */
  readonly listLimit?: number | undefined;
  /** A stored event that does not decode, as `fromJetStream` reports it. */
  readonly onDiagnostic?: ((issue: DecodeIssue) => void) | undefined;
  /**
   * Bytes of a run's events (as JSONL) that its readers in this process share
   * in memory, held while any of them reads. Past it the shared reading is
   * let go, and each reader reads on alone with a consumer of its own, from
   * which it pulls nothing while its `flow` is paused, so that a reader that
   * stays behind holds at most what paused it and one pull. Default 4 MiB.
   */
  readonly sharedReadBytes?: number | undefined;
}

/**
 * The run hub across hosts: runs are started by `serveRuns` workers
 * wherever they are, and kept in the JetStream streams (`ensureStreams`),
 * which are the one log every reader reads from its own place. `start`
 * stores a `submitted` record (once per run id: a repeated idempotency key
 * names the same run from any hub sharing the secret of `idSecret`) and
 * queues the request; `follow` reads the stored run, its readers in this
 * process sharing one reading of it (one consumer, one log in memory while
 * anyone reads it, up to `sharedReadBytes`, past which each reads alone), and readers who open it at once one lookup of its
 * status; `cancel` stores a cancel that the worker holding the run, or the
 * next to take it, acts on.
 * The workers' `runOptions` decide how a run starts. `close` stops this
 * hub taking starts; the runs go on in the fleet.
 *
 * ```ts
 * const hub = jetStreamRunHub(nc, { prefix: 'evosci' });
 * createServer(runsHandler(hub)).listen(8080);
 * ```
 */
export function jetStreamRunHub(nc: NatsConnection, options: JetStreamRunHubOptions = {}): RunHub {
  return new JetStreamRunHub(nc, options);
}

function positive(name: string, value: number | undefined, fallback: number): number {
  return wholeAtLeast('jetStreamRunHub', name, value ?? fallback, 1);
}

/** The state of `jetStreamRunHub`: the layout and limits, and whether it still takes starts. */
class JetStreamRunHub implements RunHub {
  private readonly layout: JetStreamLayout;
  private readonly allowed: readonly RequestField[];
  private readonly maxQueued: number;
  private readonly listLimit: number;
  private readonly cancelTimeoutMs: number;
  private readonly secret: HubSecret;
  private readonly timing = { ackTimeoutMs: DEFAULTS.ackTimeoutMs, retryForMs: DEFAULTS.retryForMs };
  /** The runs its readers read: one consumer and one log per run, however many read it, up to `sharedReadBytes`. */
  private readonly readings: SharedReadings;
  /** Reads of a run's records under way: the readers that open a run at once share one. */
  private readonly recordReads = new InFlight<RunRecords>();
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    options: JetStreamRunHubOptions,
  ) {
    this.layout = layoutOf(options);
    this.allowed = allowedFields(options.allowFromRequest);
    this.maxQueued = positive('maxQueued', options.maxQueued, 1000);
    this.listLimit = positive('listLimit', options.listLimit, 1000);
    this.cancelTimeoutMs = positive('cancelTimeoutMs', options.cancelTimeoutMs, DEFAULTS.cancelTimeoutMs);
    const own =
      options.idSecret === undefined ? undefined : checkSecret('jetStreamRunHub', 'idSecret', options.idSecret);
    this.secret = new HubSecret(nc, this.layout, this.timing, own);
    this.readings = new SharedReadings(
      // A reader alone pauses its own consumer's pulls; the shared reading has no flow, and is bounded by its bytes.
      (id, after, flow) =>
        fromJetStream(this.nc, id, {
          prefix: this.layout.prefix,
          keepUnknown: true,
          onDiagnostic: options.onDiagnostic,
          flow,
        }).pipe(
          map((event) => ({ index: positionOf(event)!.sequence - 1, event })),
          filter(({ index }) => index > after),
        ),
      positive('sharedReadBytes', options.sharedReadBytes, SHARED_READ_BYTES),
    );
  }

  async start(request: StartRequest, options: StartOptions = {}): Promise<StartedRun> {
    if (this.closed) throw new HubClosedError();
    const checked = checkStartRequest(request);
    const key = options.idempotencyKey;
    checkIdempotencyKey(key);
    const refused = (['workdir', 'autoMode', 'timeoutMs'] as const).find(
      (field) => checked[field] !== undefined && !this.allowed.includes(field),
    );
    if (refused) throw new RunRequestError(`this hub does not take "${refused}" from requests`);
    const fingerprint = fingerprintOf(checked);
    // A key names its run on every host that has the secret: the same key is the same run id.
    const id = key === undefined ? newRunId() : keyedRunId(await this.secret.get(), key);
    const submitted = this.submittedRecord(id, checked, fingerprint);
    // A soft bound: starts at once on several hosts may each see room for one more.
    if (key === undefined || !(await readSubmitted(this.nc, this.layout, id))) await this.checkQueue();
    const taken = await storeSubmitted(this.nc, this.layout, submitted, this.timing).catch(
      this.broker(`take run ${id}`),
    );
    if (!taken) return this.repeated(id, fingerprint, checked);
    await this.queue(id, checked);
    return { id, created: true };
  }

  follow(id: string, options: FollowOptions = {}): Observable<IndexedEvent> {
    const after = options.after ?? -1;
    return defer(() => {
      if (!(Number.isSafeInteger(after) && after >= -1))
        throw new TypeError(`follow: after must be the index of an event (≥ -1), got ${String(after)}`);
      // A run being read here is known: its reader joins without a lookup.
      return this.readings.reading(id) ? of(undefined) : from(this.status(id));
    }).pipe(
      mergeMap(() => this.readings.follow(id, after, options.flow)),
      catchError((err: unknown) =>
        throwError(() => (err instanceof AttemptSupersededError ? new RunRestartedError(id, err.nextAttempt) : err)),
      ),
    );
  }

  async status(id: string): Promise<RunStatus> {
    if (!RUN_ID.test(id)) throw new UnknownRunError(id);
    const records = await this.recordReads
      .get(id, () => readRunRecords(this.nc, this.layout, id))
      .catch(this.broker(`read run ${id}`));
    return this.statusOf(id, records);
  }

  async list(): Promise<readonly RunStatus[]> {
    const ids = await this.runIds();
    const statuses = await Promise.all(ids.map((id) => this.status(id).catch(() => undefined)));
    return statuses
      .filter((s): s is RunStatus => s !== undefined)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
      .slice(-this.listLimit);
  }

  /**
   * Stores a cancel of the run. A run no worker holds (queued) answers at
   * once, its status showing the cancel pending (`cancelRequestedAt`); for
   * one a worker holds, waits up to `cancelTimeoutMs` for the worker to
   * record its end, then answers as it stands. Every broker call is tried
   * again while the broker does not answer, for up to `retryForMs` in all.
   */
  async cancel(id: string): Promise<RunStatus> {
    if (!RUN_ID.test(id)) throw new UnknownRunError(id);
    const cancel = new RunCancel(this.nc, this.layout, id, {
      timeoutMs: this.cancelTimeoutMs,
      retryForMs: this.timing.retryForMs,
    });
    const read = () => cancel.call(`read run ${id}`, () => readRunRecords(this.nc, this.layout, id));
    const before = await read();
    const status = this.statusOf(id, before);
    if (status.endedAt !== undefined) return status;
    await cancel.store();
    if (before.stored?.record?.record === 'started') await cancel.end(before.stored.sequence);
    return this.statusOf(id, await read());
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private submittedRecord(id: string, request: StartRequest, fingerprint: string): SubmittedRecord {
    return {
      record: 'submitted',
      runId: id,
      at: new Date().toISOString(),
      prompt: request.prompt,
      fingerprint,
      ...(request.resume !== undefined && { resume: request.resume }),
      ...(request.metadata !== undefined && { metadata: request.metadata }),
    };
  }

  /** A key used before: the same request is its run (queued again if it never reached the queue); another is refused. */
  private async repeated(id: string, fingerprint: string, request: StartRequest): Promise<StartedRun> {
    const [earlier, status] = await Promise.all([
      readSubmitted(this.nc, this.layout, id),
      readStatus(this.nc, this.layout, id),
    ]).catch(this.broker(`read run ${id}`));
    // A record without this request's fingerprint (another request, or one no hub wrote) is not this run.
    if (earlier?.runId !== id || earlier.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError(id);
    // A hub that stopped between taking the run and queueing it left it without a request: queue it again.
    // A request queued twice runs once: the second is skipped by the worker that takes it.
    if (status === undefined) await this.queue(id, request);
    return { id, created: false };
  }

  /** Refuses a start past `maxQueued` requests in the work queue, before anything of it is stored. */
  private async checkQueue(): Promise<void> {
    if ((await this.queued()) >= this.maxQueued) throw new HubFullError(this.maxQueued, 'maxQueued');
  }

  /**
   * The requests the workers' consumer has yet to deliver or is waiting on
   * (`num_pending` and `num_ack_pending`): the work queue as the workers
   * see it. The stream's own count can hold requests the consumer has
   * acknowledged (a replica that was cut off while they were, and leads
   * again), which no worker will take. Before any worker made the consumer,
   * every request in the stream waits.
   */
  private async queued(): Promise<number> {
    const jsm = await clientsOf(this.nc).manager();
    const { requestsStream, workersConsumer } = this.layout;
    try {
      const info = await jsm.consumers.info(requestsStream, workersConsumer);
      return info.num_pending + info.num_ack_pending;
    } catch (err) {
      if (!isNotFound(err)) this.broker('read the work queue')(err);
    }
    const info = await jsm.streams.info(requestsStream).catch(this.broker('read the work queue'));
    return info.state.messages;
  }

  private async queue(id: string, request: StartRequest): Promise<void> {
    const { prompt, resume, workdir, autoMode, timeoutMs, metadata } = request;
    const fields = { resume, workdir, autoMode, timeoutMs, metadata };
    const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    await submitRun(this.nc, { runId: id, prompt, ...present }, { prefix: this.layout.prefix });
  }

  /** The status the records say; `UnknownRunError`, or `ForgottenRunError` if the stream no longer holds the records. */
  private statusOf(id: string, records: RunRecords): RunStatus {
    if (!records.submitted && !records.stored?.record)
      throw records.anything ? new ForgottenRunError(id) : new UnknownRunError(id);
    return runStatusOf(id, records);
  }

  /** The ids of the runs the stream holds, by their submitted and status subjects. */
  private async runIds(): Promise<string[]> {
    const jsm = await clientsOf(this.nc).manager();
    const ids = new Set<string>();
    for (const filter of [this.layout.allSubmittedSubjects, this.layout.allStatusSubjects]) {
      const info = await jsm.streams.info(this.layout.eventsStream, { subjects_filter: filter });
      for (const subject of Object.keys(info.state.subjects ?? {})) ids.add(subject.split('.').at(-2)!);
    }
    return [...ids];
  }

  private broker(what: string): (err: unknown) => never {
    return (err: unknown) => {
      throw brokerError(this.nc, `could not ${what}`, err);
    };
  }
}
