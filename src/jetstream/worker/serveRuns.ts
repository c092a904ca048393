import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import { Observable } from 'rxjs';
import type { RunOptions } from '../../process/run.js';
import { DEFAULTS } from '../wire/defaults.js';
import { layoutOf, type LayoutOptions } from '../wire/layout.js';
import type { RunRequest } from '../wire/runRequest.js';
import { REQUEST_FIELDS, type RequestField } from '../../process/requestedOptions.js';
import { Worker } from './Worker.js';
import type { PipeRun, WorkerActivity, WorkerSettings } from './workerTypes.js';
import { writeLimitsOf, type WorkerPublishOptions } from '../write/publishTo.js';
import { atLeast, wholeAtLeast } from '../../common/checks.js';

/** Options of `serveRuns`. */
export interface ServeRunsOptions extends LayoutOptions {
  /** Runs at once in this worker. Default 1. */
  readonly concurrency?: number;
  /**
   * The options of each run: this worker's own, to which a request adds only
   * its `prompt`, the thread it `resume`s and the fields of `allowFromRequest`;
   * or a function of the request and attempt that returns them all.
   * `lifeline` is always on.
   */
  readonly runOptions?: Omit<RunOptions, 'prompt'> | ((request: RunRequest, attempt: number) => RunOptions);
  /**
   * The fields a request may set besides its prompt and resume: any of
   * `workdir`, `autoMode`, `timeoutMs`. Default none: a request that sets
   * another is dead-lettered with a reason naming the field.
   */
  readonly allowFromRequest?: readonly RequestField[];
  /** Times a request is started before it is dead-lettered. Default 3. */
  readonly maxAttempts?: number;
  /**
   * How long a request stays with a worker that stopped confirming it is
   * working on it (every third of this), before it is delivered again.
   * Default 10 s: a dead host's runs move on within seconds, and a live one
   * thought dead meanwhile stops its superseded attempt at its next confirmation.
   * A confirmation the server does not answer (its consumer electing a
   * leader) is tried again every 250 ms, each try reported as `unconfirmed`.
   */
  readonly ackWaitMs?: number;
  /** This worker's name in `started` records. Default `host:pid`. */
  readonly worker?: string;
  /**
   * Wraps each run's events before they are published, given the request's
   * own headers (see `SubmitRunOptions.headers`): `traceServedRuns()` of
   * `evosci-rx/otel` traces each run under its submitter's span. What it
   * returns must pass the events on.
   */
  readonly pipeRun?: PipeRun;
  /** How events are published. */
  readonly publish?: WorkerPublishOptions;
}

/**
 * A worker: while subscribed, takes run requests from the work-queue stream
 * through the durable pull consumer all workers share, at most `concurrency`
 * at a time, and runs each with `run()` (with `lifeline`, so its CLI dies
 * with this process) through `publishTo`. The request stays in progress
 * (`working()`) while the run lasts and is acknowledged once its `finished`
 * record is stored. While more than `publish.highWaterBytes` of a run's
 * events await storage (a slow link, a broker that falls behind), its CLI's
 * stdout is not read, and the CLI waits on its writes. A worker that dies stops confirming, and after
 * `ackWaitMs` the request goes to another worker as the next attempt,
 * numbered from the run's status records; the delivery after `maxAttempts`
 * writes a `dead-letter` record instead, and so does a request that is not
 * valid (no prompt, say), at once. A run in progress or ended is not started
 * again. Status records are conditional on the run's status subject, so an
 * attempt superseded while it ran writes nothing more and is reported as
 * `superseded`.
 *
 * Cancels (`cancelRun`) are watched from before the first request is taken,
 * on `<prefix>.run.*.cancel`: a run this worker holds is stopped (its CLI
 * only starts once its `started` record is stored and no cancel is) and
 * recorded as failed with a `CancelledError`, its request acknowledged; a
 * cancelled run that no attempt is running has its end recorded and its
 * request acknowledged unrun (`cancelled`).
 *
 * Emits what it does (`WorkerActivity`). A broker call that fails or times
 * out while a request is taken hands the request back (`retrying`), and one
 * that fails while a run is stored hands it back once the run ends
 * (`returned`): neither ends the worker. Unsubscribing stops taking work,
 * stops the runs in progress and returns their requests to the queue. Errors
 * with `BrokerError` when the consumer cannot be set up or the connection closes.
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
  wholeAtLeast('serveRuns', 'concurrency', concurrency, 1);
  wholeAtLeast('serveRuns', 'maxAttempts', maxAttempts, 1);
  atLeast('serveRuns', 'ackWaitMs', ackWaitMs, 1000);
  const writeLimits = writeLimitsOf(options.publish ?? {}, 'serveRuns', 'publish.');
  const settings: WorkerSettings = {
    layout,
    concurrency,
    maxAttempts,
    ackWaitMs,
    worker: options.worker ?? `${hostname()}:${process.pid}`,
    timing: writeLimits.timing,
    runOptions: options.runOptions,
    allowFromRequest: allowedFields(options.allowFromRequest),
    writeLimits,
    pipeRun: options.pipeRun,
  };

  return new Observable<WorkerActivity>((subscriber) => {
    const worker = new Worker(nc, settings, subscriber);
    worker.start();
    return () => worker.stop();
  });
}

function allowedFields(given: readonly RequestField[] | undefined): readonly RequestField[] {
  const fields: readonly unknown[] = Array.isArray(given) ? given : given === undefined ? [] : [given];
  const unknown = fields.find((field) => !(REQUEST_FIELDS as readonly unknown[]).includes(field));
  if (unknown !== undefined || !(given === undefined || Array.isArray(given)))
    throw new TypeError(`allowFromRequest takes ${REQUEST_FIELDS.join(', ')}; got ${JSON.stringify(unknown ?? given)}`);
  return fields as readonly RequestField[];
}
