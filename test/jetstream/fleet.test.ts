// 50 runs through 3 worker processes: a remote consumer of each gets what a
// local subscriber of run() gets, event for event, and the same ending.
import { lastValueFrom, materialize, toArray, type Observable } from 'rxjs';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/process/run.js';
import { fromJetStream, submitRun, watchRuns, type StatusRecord } from '../../src/jetstream/index.js';
import { SCENARIOS, scenarioRun, type Scenario } from './scenarios.js';
import { BROKER, connectBroker, streamsFor, uniquePrefix } from './support.js';
import { processesTagged, startWorker, stopWorkers, type WorkerProcess } from './workers.js';
import { eventually } from '../support/processes.js';

interface Outcome {
  events: unknown[];
  error?: {
    name: string;
    message: string;
    exitCode: number | undefined;
    signal: string | undefined;
    threadId: string | undefined;
  };
}

async function outcome(events$: Observable<unknown>): Promise<Outcome> {
  const notes = await lastValueFrom(events$.pipe(materialize(), toArray()));
  const events = notes.filter((n) => n.kind === 'N').map((n) => n.value);
  const last = notes.at(-1)!;
  if (last.kind !== 'E') return { events };
  const err = last.error as Error & { exitCode?: number; signal?: string; threadId?: string };
  return {
    events,
    error: { name: err.name, message: err.message, exitCode: err.exitCode, signal: err.signal, threadId: err.threadId },
  };
}

describe('runs through workers on JetStream', () => {
  const prefix = uniquePrefix('fleet');
  // Not the prefix alone: the workers' command lines carry that.
  const tag = `cli-${prefix}`;
  let nc: NatsConnection;
  let cleanup: () => Promise<void>;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    nc = await connectBroker();
    cleanup = await streamsFor(nc, prefix);
  });
  afterAll(async () => {
    await stopWorkers(workers);
    await cleanup?.();
    await nc?.close();
  });

  it('delivers every event of 50 runs exactly once, in order, ending as each ends locally', async () => {
    const local = new Map<Scenario, Outcome>();
    for (const scenario of SCENARIOS) local.set(scenario, await outcome(run(scenarioRun(scenario, tag))));
    // The scenarios do end differently: completed, killed, exit 1 after an error event, done after an interrupt.
    expect(SCENARIOS.map((s) => local.get(s)!.error?.name ?? 'completed')).toEqual([
      'completed',
      'ExitError',
      'ExitError',
      'completed',
    ]);

    const records: StatusRecord[] = [];
    // From the stream's start: no record can be written before the watcher is ready.
    const watching = watchRuns(nc, { prefix, from: 'start' }).subscribe({
      next: (r) => records.push(r),
      error: () => undefined,
    });

    // No worker here dies: the default ack wait keeps a worker slowed by a loaded machine from being thought dead.
    workers.push(...[0, 1, 2].map(() => startWorker(BROKER, prefix, { concurrency: 2, ackWaitMs: 10_000 })));
    await Promise.all(workers.map((w) => w.ready));

    const runs = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const scenario = SCENARIOS[i % SCENARIOS.length]!;
        const runId = await submitRun(nc, { prompt: `${scenario} [${tag}]`, metadata: { scenario, tag } }, { prefix });
        return { runId, scenario };
      }),
    );
    const remote = await Promise.all(runs.map(({ runId }) => outcome(fromJetStream(nc, runId, { prefix }))));

    for (const [i, { scenario }] of runs.entries()) {
      expect(remote[i], `run ${i} (${scenario})`).toEqual(local.get(scenario));
    }
    // Every worker took part, and each run was started once and finished once.
    // (A worker reports a run after its ack, which may follow the remote consumer's end.)
    const finished = () => workers.flatMap((w) => w.activity.filter((a) => a['type'] === 'finished'));
    expect(await eventually(() => finished().length >= 50)).toBe(true);
    expect(finished()).toHaveLength(50);
    for (const w of workers) expect(w.activity.filter((a) => a['type'] === 'finished').length).toBeGreaterThan(0);
    // Each run's end is recorded once; a completed run's comes again with the thread its CLI reported at exit.
    const ends = () => records.filter((r) => r.record === 'finished' && r.threadId === undefined);
    expect(await eventually(() => ends().length === 50)).toBe(true);
    expect(new Set(ends().map((r) => r.runId)).size).toBe(50);
    expect(records.filter((r) => r.record === 'started')).toHaveLength(50);
    watching.unsubscribe();
    expect(await eventually(() => processesTagged(tag).length === 0)).toBe(true);
  }, 120_000);
});
