/**
 * Failover time of a killed host at the default ack wait: two worker
 * processes (`test/jetstream/worker.ts`, `serveRuns` with the defaults'
 * `ackWaitMs` and `maxAttempts`, concurrency 1) serve a prefix of their own;
 * a run of the fake CLI (the `slow` scenario, about 5 s) is submitted, and the
 * worker that starts it is SIGKILLed, its CLI with it. Measured from the kill:
 * the run's `started` record of attempt 2 (written by the other worker) and
 * its `finished` record, as a `watchRuns` subscriber receives them.
 *
 * A request stays with its worker `ackWaitMs` after its last confirmation
 * (`working()`, every third of it), so the time to move depends on when in
 * that cycle the host dies: trial i of n kills it i/n of a heartbeat
 * interval after its `started`, spreading the kills over the cycle. A fresh
 * worker replaces the killed one before the next trial.
 *
 * ```bash
 * npx tsx test/bench/failover.bench.ts              # 6 trials
 * npx tsx test/bench/failover.bench.ts --smoke      # 1 trial
 * ```
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { filter, firstValueFrom, ReplaySubject } from 'rxjs';
import { DEFAULTS } from '../../src/jetstream/wire/defaults.js';
import { submitRun, watchRuns, type StatusRecord } from '../../src/jetstream/index.js';
import { natsUrl } from '../support/natsServer.js';
import { eventually } from '../support/processes.js';
import { deleteStreams, streamsFor, uniquePrefix } from '../jetstream/support.js';
import { startWorker, stopWorkers, type WorkerProcess } from '../jetstream/workers.js';
import { median, table } from './report.js';

const { values: flags } = parseArgs({
  options: { trials: { type: 'string' }, smoke: { type: 'boolean', default: false } },
});
const trials = Number(flags.trials ?? (flags.smoke ? 1 : 6));
const server = natsUrl();
const heartbeatMs = Math.floor(DEFAULTS.ackWaitMs / 3);

const nc = await connect({ servers: server, timeout: 3000 }).catch((err: unknown) => {
  console.error(`failover.bench needs nats-server -js at ${server}: ${(err as Error).message}`);
  process.exit(1);
});
const prefix = uniquePrefix('failover');
await streamsFor(nc, prefix, { storage: 'file' });
// Each record with the time it reached this process.
const records = new ReplaySubject<{ record: StatusRecord; at: number }>();
const watching = watchRuns(nc, { prefix, from: 'start' }).subscribe((record) =>
  records.next({ record, at: performance.now() }),
);
const spawnWorker = () =>
  startWorker(server, prefix, { concurrency: 1, ackWaitMs: DEFAULTS.ackWaitMs, maxAttempts: DEFAULTS.maxAttempts });
const workers: WorkerProcess[] = [spawnWorker(), spawnWorker()];

/** When the record `matches` describes reaches this process. */
const recorded = (runId: string, matches: (record: StatusRecord) => boolean) =>
  firstValueFrom(records.pipe(filter(({ record }) => record.runId === runId && matches(record)))).then(({ at }) => at);
const startedBy = (worker: WorkerProcess, runId: string) =>
  worker.activity.some((a) => a['type'] === 'started' && a['runId'] === runId);

/** One trial: the seconds from the kill to attempt 2's start and to the run's end, and the run's own length. */
async function trial(i: number): Promise<{ killAfter: number; moved: number; finished: number; length: number }> {
  await Promise.all(workers.map((w) => w.ready));
  const runId = await submitRun(
    nc,
    { prompt: `failover ${i}`, metadata: { scenario: 'slow', tag: prefix } },
    { prefix },
  );
  // Killed once its attempt is recorded: a worker killed before that leaves no attempt behind, and the run starts as attempt 1.
  await recorded(runId, (r) => r.record === 'started' && r.attempt === 1);
  if (!(await eventually(() => workers.some((w) => startedBy(w, runId)))))
    throw new Error(`no worker reported starting run ${runId}`);
  const holder = workers.find((w) => startedBy(w, runId))!;
  const killAfter = (heartbeatMs * i) / trials;
  await new Promise((resolve) => setTimeout(resolve, killAfter));
  const killedAt = performance.now();
  holder.child.kill('SIGKILL');
  await holder.exited;
  workers.splice(workers.indexOf(holder), 1, spawnWorker());
  const moved = await recorded(runId, (r) => r.record === 'started' && r.attempt === 2);
  const ended = await firstValueFrom(
    records.pipe(filter(({ record }) => record.runId === runId && record.record === 'finished')),
  );
  const { record } = ended;
  if (record.record !== 'finished' || record.attempt !== 2 || record.outcome !== 'completed')
    throw new Error(`run ${runId} ended as ${JSON.stringify(record)}, not completed by attempt 2`);
  const finished = ended.at;
  return {
    killAfter: killAfter / 1000,
    moved: (moved - killedAt) / 1000,
    finished: (finished - killedAt) / 1000,
    length: (finished - moved) / 1000,
  };
}

try {
  const results = [];
  for (let i = 0; i < trials; i++) results.push(await trial(i));
  const s = (seconds: number) => `${seconds.toFixed(2)} s`;
  console.log(
    `Failover of a SIGKILLed worker: ackWaitMs ${DEFAULTS.ackWaitMs}, heartbeat every ${heartbeatMs} ms, ${trials} trial(s), broker ${server}, node ${process.version}`,
  );
  console.log(
    table(
      ['trial', 'killed after started', 'to started(2)', 'to finished', 'attempt 2 ran'],
      results.map((r, i) => [String(i + 1), s(r.killAfter), s(r.moved), s(r.finished), s(r.length)]),
    ),
  );
  for (const [name, key] of [
    ['kill → started(2)', 'moved'],
    ['kill → finished  ', 'finished'],
  ] as const) {
    const xs = results.map((r) => r[key]);
    console.log(`${name}  min ${s(Math.min(...xs))}   median ${s(median(xs))}   max ${s(Math.max(...xs))}`);
  }
} finally {
  watching.unsubscribe();
  await stopWorkers(workers);
  await deleteStreams(nc, prefix);
  await nc.close();
}
