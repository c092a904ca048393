import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type Consumer, type JsMsg } from '@nats-io/jetstream';
import { Observable, type Subscription } from 'rxjs';
import { run, type RunOptions } from '../process/run.js';
import { brokerError, isNotFound } from './ensureStreams.js';
import { AttemptSupersededError, BrokerError, StatusMovedError } from './errors.js';
import { checkRunId, clientsOf, layoutOf, serverOf, type JetStreamLayout, type LayoutOptions } from './layout.js';
import { publishStored, publishTo, type PublishToOptions } from './publishTo.js';
import { encodeRecord, Headers, type DeadLetterRecord } from './records.js';
import { readStatus, requestPending } from './status.js';
import { RunRequest } from './submitRun.js';

/** Options of `serveRuns`. */
export interface ServeRunsOptions extends LayoutOptions {
  /** Runs at once in this worker. Default 1. */
  readonly concurrency?: number;
  /**
   * The options of each run: an object added to the request's `prompt`,
   * `autoMode`, `resume` and `timeoutMs`, or a function of the request and
   * attempt that returns them all. `lifeline` is always on.
   */
  readonly runOptions?: Omit<RunOptions, 'prompt'> | ((request: RunRequest, attempt: number) => RunOptions);
  /** Times a request is started before it is dead-lettered. Default 3. */
  readonly maxAttempts?: number;
  /**
   * How long a request stays with a worker that stopped confirming it is
   * working on it (every third of this), before it is delivered again. Default 30 s.
   */
  readonly ackWaitMs?: number;
  /** This worker's name in `started` records. Default `host:pid`. */
  readonly worker?: string;
  /** How events are published. */
  readonly publish?: Pick<PublishToOptions, 'maxPendingAcks' | 'maxBufferBytes' | 'ackTimeoutMs' | 'retryForMs'>;
}

/** What a worker did, as `serveRuns` emits it. */
export type WorkerActivity =
  | { readonly type: 'started'; readonly runId: string; readonly attempt: number }
  | {
      readonly type: 'finished';
      readonly runId: string;
      readonly attempt: number;
      readonly outcome: 'completed' | 'failed';
      readonly error?: unknown;
    }
  /** The attempt could not be recorded (broker unreachable): the request goes back to the queue. */
  | { readonly type: 'returned'; readonly runId: string; readonly attempt: number; readonly error: unknown }
  /** Another attempt was started while this one ran: what it wrote last was refused, and it stopped. */
  | {
      readonly type: 'superseded';
      readonly runId: string;
      readonly attempt: number;
      readonly nextAttempt: number;
    }
  /** Delivered again after its run had already ended, or submitted again while it runs: acknowledged without running it. */
  | { readonly type: 'skipped'; readonly runId: string; readonly attempt: number; readonly reason: string }
  | { readonly type: 'dead-lettered'; readonly runId: string | undefined; readonly reason: string };

const DEFAULTS = { concurrency: 1, maxAttempts: 3, ackWaitMs: 30_000 } as const;
/** How long one pull for a request waits on the server; also the longest a stop waits for it. */
const PULL_EXPIRES_MS = 5000;
const nanos = (ms: number) => Math.round(ms * 1_000_000);

interface Active {
  /** The latest delivery of the request: the one the server waits on. */
  msg: JsMsg;
  readonly timer: ReturnType<typeof setInterval>;
  subscription?: Subscription;
}

/**
 * A worker: while subscribed, takes run requests from the work-queue stream
 * through the durable pull consumer all workers share, at most `concurrency`
 * at a time, and runs each with `run()` (with `lifeline`, so its CLI dies
 * with this process) through `publishTo`. The request stays in progress
 * (`working()`) while the run lasts and is acknowledged once its `finished`
 * record is stored. A worker that dies stops confirming, and after
 * `ackWaitMs` the request goes to another worker as the next attempt; the
 * delivery after `maxAttempts` writes a `dead-letter` record instead, and so
 * does a request that is not valid (no prompt, say), at once.
 *
 * Emits what it does (`WorkerActivity`). Unsubscribing stops taking work,
 * stops the runs in progress and returns their requests to the queue. Errors
 * with `BrokerError` when the stream is missing or the connection closes.
 *
 * ```
 * requests:  --r1--r2------r3----
 * activity:  --s1--s2--f1--s3-f2-   (concurrency 2: r3 waits for a free slot)
 * ```
 *
 * ```ts
 * serveRuns(nc, { concurrency: 2, runOptions: { killGraceMs: 5000 } }).subscribe(console.log);
 * ```
 */
export function serveRuns(nc: NatsConnection, options: ServeRunsOptions = {}): Observable<WorkerActivity> {
  const layout = layoutOf(options);
  const concurrency = options.concurrency ?? DEFAULTS.concurrency;
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  const ackWaitMs = options.ackWaitMs ?? DEFAULTS.ackWaitMs;
  if (!(Number.isInteger(concurrency) && concurrency >= 1))
    throw new TypeError(`concurrency must be an integer ≥ 1, got ${String(concurrency)}`);
  if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1))
    throw new TypeError(`maxAttempts must be an integer ≥ 1, got ${String(maxAttempts)}`);
  if (!(ackWaitMs >= 1000)) throw new TypeError(`ackWaitMs must be at least 1000, got ${String(ackWaitMs)}`);
  const worker = options.worker ?? `${hostname()}:${process.pid}`;
  const timing = {
    ackTimeoutMs: options.publish?.ackTimeoutMs ?? 5000,
    retryForMs: options.publish?.retryForMs ?? 30_000,
  };

  return new Observable<WorkerActivity>((subscriber) => {
    let stopped = false;
    const active = new Set<Active>();
    let slotFreed: (() => void) | undefined;
    /** Pulls waiting for a request, and requests taken and not yet done with: together at most `concurrency`. */
    let pulling = 0;
    let handling = 0;
    const emit = (activity: WorkerActivity) => {
      if (!stopped) subscriber.next(activity);
    };

    /**
     * Writes a dead-letter record, only while `expectLastSequence` is still the
     * last of the run's status (0: the run has none), so that it never lands
     * on a run this request does not own.
     */
    const deadLetter = async (
      runId: string | undefined,
      reason: string,
      attempts: number,
      expectLastSequence: number,
    ) => {
      let recorded = runId !== undefined;
      if (runId !== undefined) {
        const record: DeadLetterRecord = {
          record: 'dead-letter',
          runId,
          at: new Date().toISOString(),
          attempts,
          reason,
        };
        await publishStored(
          nc,
          {
            subject: layout.statusSubject(runId),
            msgID: `${runId}.dead-letter`,
            headers: { [Headers.runId]: runId, [Headers.record]: 'dead-letter' },
            expectLastSequence,
          },
          encodeRecord(record),
          timing,
        ).catch((err: unknown) => {
          if (!(err instanceof StatusMovedError)) throw err;
          recorded = false;
        });
      }
      emit({
        type: 'dead-lettered',
        runId,
        reason:
          recorded || runId === undefined ? reason : `${reason} (not recorded: run ${runId} is another request's)`,
      });
    };

    const handle = async (msg: JsMsg): Promise<void> => {
      const parsed = parseRequest(msg);
      if ('reason' in parsed) {
        await deadLetter(parsed.runId, parsed.reason, 0, 0);
        msg.term(parsed.reason);
        return;
      }
      const request = parsed.request;
      const { runId } = request;
      const mine = [...active].find((entry) => entry.msg.seq === msg.seq);
      if (mine) {
        // Delivered again while this worker runs it (its progress reached the server late): keep it,
        // confirming through the newest delivery, which is the one the server now waits on.
        mine.msg = msg;
        msg.working();
        return;
      }
      const status = await readStatus(nc, layout, runId);
      const last = status?.record;
      if (last?.record === 'finished' || last?.record === 'dead-letter') {
        // Its end was recorded but the ack was lost, or the run was submitted again: do not run it again.
        await msg.ackAck().catch(() => undefined);
        emit({
          type: 'skipped',
          runId,
          attempt: last.record === 'finished' ? last.attempt : last.attempts,
          reason: `run already ${last.record === 'finished' ? 'finished' : 'dead-lettered'}`,
        });
        return;
      }
      if (
        last?.record === 'started' &&
        last.request !== undefined &&
        last.request !== msg.seq &&
        (await requestPending(nc, layout, last.request))
      ) {
        // The same run id submitted again while its first request is still being worked on.
        await msg.ackAck().catch(() => undefined);
        emit({
          type: 'skipped',
          runId,
          attempt: last.attempt,
          reason: `run already in progress (attempt ${last.attempt})`,
        });
        return;
      }
      // Attempts are numbered by the started records, never by the delivery count. The server
      // counts every delivery, and a delivery can reach a worker that never starts it: a worker
      // whose progress reached the server after ackWaitMs receives the request again on its own
      // waiting pull, and can die before it writes that attempt's start; a worker can also be
      // killed, or stop, between taking a request and starting it. Each such delivery pushes the
      // count past the attempts started, so a count-based number skips. The started record is
      // written only while the status read here is still the last (see publishTo), so two
      // writers can never both start the same attempt, and numbers are exact: 1, 2, 3.
      const attempt = last?.record === 'started' ? last.attempt + 1 : 1;
      const fence = status?.sequence ?? 0;
      if (attempt > maxAttempts) {
        const lastWorker = last?.record === 'started' && last.worker ? `, last on ${last.worker}` : '';
        await deadLetter(
          runId,
          `its worker stopped before the run finished in each of ${maxAttempts} attempts${lastWorker}`,
          maxAttempts,
          fence,
        );
        await msg.ackAck().catch(() => undefined);
        return;
      }
      let runOptions: RunOptions;
      let events$;
      try {
        runOptions = toRunOptions(options.runOptions, request, attempt);
        events$ = run({ ...runOptions, lifeline: true });
      } catch (err) {
        await deadLetter(runId, `the request cannot be run: ${(err as Error).message}`, 0, fence);
        msg.term();
        return;
      }
      await new Promise<void>((resolve) => {
        let recorded = false;
        const entry: Active = {
          msg,
          timer: setInterval(() => entry.msg.working(), Math.max(250, Math.floor(ackWaitMs / 3))),
        };
        active.add(entry);
        emit({ type: 'started', runId, attempt });
        const settle = (error?: unknown) => {
          clearInterval(entry.timer);
          active.delete(entry);
          resolve();
          if (stopped) return;
          if (error instanceof AttemptSupersededError) {
            // Another attempt owns the run and the request now: leave both alone.
            return emit({ type: 'superseded', runId, attempt, nextAttempt: error.nextAttempt });
          }
          if (!recorded) {
            entry.msg.nak();
            return emit({ type: 'returned', runId, attempt, error });
          }
          void entry.msg.ackAck().catch(() => undefined);
          emit(
            error === undefined
              ? { type: 'finished', runId, attempt, outcome: 'completed' }
              : { type: 'finished', runId, attempt, outcome: 'failed', error },
          );
        };
        entry.subscription = events$
          .pipe(
            publishTo(nc, runId, {
              ...options.publish,
              prefix: layout.prefix,
              attempt,
              worker,
              prompt: runOptions.prompt,
              lastStatusSequence: fence,
              requestSequence: msg.seq,
              onFinished: () => (recorded = true),
            }),
          )
          .subscribe({ error: settle, complete: () => settle() });
      });
    };

    const release = () => {
      const wake = slotFreed;
      slotFreed = undefined;
      wake?.();
    };

    const serve = async () => {
      const consumer = await workersConsumer(nc, layout, { ackWaitMs });
      while (!stopped) {
        if (handling + pulling >= concurrency) {
          await new Promise<void>((resolve) => (slotFreed = resolve));
          continue;
        }
        let msg: JsMsg | null;
        pulling++;
        try {
          msg = await consumer.next({ expires: PULL_EXPIRES_MS });
        } catch (err) {
          if (nc.isClosed())
            throw new BrokerError(`stopped taking work: the connection to ${serverOf(nc)} closed`, { cause: err });
          // The broker is away or restarting: ask again shortly.
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        } finally {
          pulling--;
        }
        if (!msg) continue;
        if (stopped) {
          msg.nak();
          break;
        }
        const taken = msg;
        handling++;
        void handle(taken)
          .catch((err: unknown) => {
            // The run never started (its status could not be read or written): let another try.
            taken.nak();
            if (!stopped)
              subscriber.error(err instanceof BrokerError ? err : brokerError(nc, 'could not take a run request', err));
          })
          .finally(() => {
            handling--;
            release();
          });
      }
    };

    serve().catch((err: unknown) => {
      if (!stopped) subscriber.error(err);
    });

    return () => {
      stopped = true;
      release();
      for (const entry of active) {
        clearInterval(entry.timer);
        entry.subscription?.unsubscribe();
        // Back to the queue at once: another worker starts the next attempt.
        entry.msg.nak();
      }
      active.clear();
    };
  });
}

function toRunOptions(given: ServeRunsOptions['runOptions'], request: RunRequest, attempt: number): RunOptions {
  if (typeof given === 'function') return given(request, attempt);
  const fromRequest: RunOptions = {
    prompt: request.prompt,
    ...(request.autoMode === undefined ? {} : { autoMode: request.autoMode }),
    ...(request.resume === undefined ? {} : { resume: request.resume }),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
  };
  return { ...given, ...fromRequest };
}

/** The request in a message, or why it cannot be run (with its run id when the header has one). */
function parseRequest(msg: JsMsg): { request: RunRequest } | { runId: string | undefined; reason: string } {
  let runId = msg.headers?.get(Headers.runId) || undefined;
  try {
    if (runId !== undefined) checkRunId(runId);
  } catch {
    runId = undefined;
  }
  let value: unknown;
  try {
    value = msg.json();
  } catch (err) {
    return { runId, reason: `the request is not JSON: ${(err as Error).message}` };
  }
  const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (runId === undefined && typeof body['runId'] === 'string') {
    try {
      checkRunId(body['runId']);
      runId = body['runId'];
    } catch {
      return {
        runId: undefined,
        reason: `the request's runId is not a valid run id: ${JSON.stringify(body['runId'])}`,
      };
    }
  }
  if (typeof body['prompt'] !== 'string' || body['prompt'] === '') {
    return { runId, reason: 'the request has no prompt: a non-empty string "prompt" is required' };
  }
  const request = { ...body, runId };
  if (runId === undefined || !RunRequest.is(request)) {
    return {
      runId,
      reason: `the request is not a run request (runId, prompt, and optional workdir, autoMode, resume, timeoutMs, metadata)`,
    };
  }
  return { request };
}

/** The durable pull consumer of the requests stream, created or brought to these settings. */
async function workersConsumer(
  nc: NatsConnection,
  layout: JetStreamLayout,
  { ackWaitMs }: { ackWaitMs: number },
): Promise<Consumer> {
  const jsm = await clientsOf(nc).manager();
  const settings = {
    ack_wait: nanos(ackWaitMs),
    // Unlimited: attempts are counted by their started records, and a delivery that starts
    // nothing (see handle) must not use up the run's last one.
    max_deliver: -1,
  };
  try {
    try {
      await jsm.consumers.info(layout.requestsStream, layout.workersConsumer);
      await jsm.consumers.update(layout.requestsStream, layout.workersConsumer, settings);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await jsm.consumers.add(layout.requestsStream, {
        ...settings,
        durable_name: layout.workersConsumer,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
    }
    return await clientsOf(nc).js.consumers.get(layout.requestsStream, layout.workersConsumer);
  } catch (err) {
    throw brokerError(
      nc,
      `could not set up consumer ${layout.workersConsumer} of stream ${layout.requestsStream} (has ensureStreams run?)`,
      err,
    );
  }
}
