// A fleet under faults, on a nats-server of this test's own: three worker
// processes, each behind a TCP proxy of its own; one worker's link stalls for
// longer than the ack wait, another's holds only what the worker sends (a
// one-way partition: it still receives), one worker is killed, and the broker restarts,
// while 30 runs go through. Every run must be readable, with the events of
// exactly one attempt, and no worker may be lost to a blip.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, map, toArray, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureStreams,
  fromJetStream,
  positionOf,
  submitRun,
  watchRuns,
  type FinishedRecord,
  type StatusRecord,
} from '../../src/jetstream/index.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { eventually } from '../support/processes.js';
import { fixtureEvents, ownBroker, uniquePrefix, type OwnBroker } from './support.js';
import { startWorker, stopWorkers, type WorkerProcess } from './workers.js';
import { Executions, type Fate } from './executions.js';

const RUNS = 30;
const ACK_WAIT_MS = 2000;
/** Longer than the ack wait: the stalled worker's requests are handed to others meanwhile. */
const STALL_MS = 3500;
const research = fixtureEvents('research-run.jsonl');
const count = (fates: readonly Fate[], fate: Fate) => fates.filter((f) => f === fate).length;

describe('a fleet under partitions, a killed worker and a broker restart', () => {
  const prefix = uniquePrefix('chaos');
  let broker: OwnBroker;
  let nc: NatsConnection;
  const proxies: TcpProxy[] = [];
  const workers: WorkerProcess[] = [];
  const records: StatusRecord[] = [];
  let watching: Subscription | undefined;

  beforeAll(async () => {
    broker = await ownBroker();
    await broker.start();
    nc = await connect({ servers: broker.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    await ensureStreams(nc, { prefix, storage: 'file' });
    for (let i = 0; i < 3; i++) {
      const proxy = await TcpProxy.start(broker.url);
      proxies.push(proxy);
      workers.push(startWorker(proxy.url, prefix, { concurrency: 2, ackWaitMs: ACK_WAIT_MS, maxAttempts: 10 }));
    }
    await Promise.all(workers.map((w) => w.ready));
    watching = watchRuns(nc, { prefix, from: 'start' }).subscribe((record) => records.push(record));
  });
  afterAll(async () => {
    watching?.unsubscribe();
    await stopWorkers(workers);
    for (const proxy of proxies) await proxy.close();
    await nc?.close();
    await broker?.dispose();
  });

  const finished = () => new Set(records.filter((r) => r.record === 'finished').map((r) => r.runId)).size;
  const startedBy = (worker: WorkerProcess) => worker.activity.filter((a) => a['type'] === 'started').length;

  it('reads every run back whole, each from exactly one attempt, and loses no worker to a blip', async () => {
    const [stalled, killed, halfStalled] = workers as [WorkerProcess, WorkerProcess, WorkerProcess];
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      runIds.push(
        await submitRun(nc, { prompt: `chaos ${i}`, metadata: { scenario: 'paced', tag: prefix } }, { prefix }),
      );
    }

    // A partition longer than the ack wait, once the worker has runs in hand.
    expect(await eventually(() => startedBy(stalled) > 0)).toBe(true);
    proxies[0]!.stall();
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    proxies[0]!.resume();
    const sinceResume = stalled.activity.length;

    // A one-way partition as long: the worker receives requests it cannot answer for.
    proxies[2]!.stall('toServer');
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    proxies[2]!.resume();

    // A host that dies with runs in hand.
    expect(await eventually(() => killed.activity.some((a) => a['type'] === 'started'))).toBe(true);
    killed.child.kill('SIGKILL');

    // The broker restarts halfway: its file store keeps every stream.
    expect(await eventually(() => finished() >= RUNS / 2, 60_000)).toBe(true);
    await broker.stop();
    await broker.start();

    expect(await eventually(() => finished() === RUNS, 90_000)).toBe(true);
    for (const runId of runIds) {
      const end = records.find((r): r is FinishedRecord => r.runId === runId && r.record === 'finished')!;
      // Read back whole, in order, and only from the attempt whose end was stored.
      const read = await lastValueFrom(
        fromJetStream(nc, runId, { prefix }).pipe(
          map((event) => ({ event, position: positionOf(event)! })),
          toArray(),
        ),
      );
      expect(read.map((r) => r.event)).toEqual(research);
      expect(read.map((r) => r.position.sequence)).toEqual(research.map((_, i) => i + 1));
      expect(new Set(read.map((r) => r.position.attempt))).toEqual(new Set([end.attempt]));
    }
    // Runs started twice (the stall, the kill) each end once: only their last attempt's end was stored.
    for (const runId of runIds) {
      const ends = records.filter((r) => r.runId === runId && r.record === 'finished');
      const last = Math.max(
        ...records
          .filter((r) => r.runId === runId && r.record === 'started')
          .map((r) => (r as { attempt: number }).attempt),
      );
      expect(ends.map((r) => (r as { attempt: number }).attempt)).toEqual([last]);
    }
    // Every execution but the one whose end was stored was fenced: its worker was told its write was
    // refused (superseded) or handed the request back, or it died with the killed worker.
    const executions = new Executions(workers, records);
    expect(await eventually(() => executions.unsettled(killed).length === 0)).toBe(true);
    const duplicated = executions.duplicatedRuns();
    const fates = executions.fates(killed);
    console.log(
      `chaos: ${RUNS} runs, ${duplicated.length} executed more than once (${fates.length} extra executions: ` +
        `${count(fates, 'superseded')} superseded with their writes refused, ${count(fates, 'killed')} killed ` +
        `with their worker, ${count(fates, 'returned')} handed back); each read back from its one stored attempt`,
    );
    expect(fates.filter((fate) => fate === 'unfenced')).toEqual([]);
    // The killed worker had a run in hand: there is always at least one duplicate to fence.
    expect(duplicated.length).toBeGreaterThan(0);
    // The stalled workers came back and served again.
    expect(stalled.child.exitCode).toBeNull();
    expect(halfStalled.child.exitCode).toBeNull();
    // What it held through the stall it ended or gave up to the attempt that superseded it.
    const after = stalled.activity.slice(sinceResume).map((a) => a['type']);
    expect(after.some((type) => type === 'finished' || type === 'superseded' || type === 'returned')).toBe(true);
  }, 180_000);
});
