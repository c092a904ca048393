// cancelRun: a queued run never starts, a running one is stopped on
// whichever worker holds it and not run again, an ended one is left as it
// is, and only a user with the cancel permission can ask.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom, materialize, tap, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/events/errors.js';
import {
  BrokerError,
  cancelRun,
  DeadLetterError,
  ensureStreams,
  fromJetStream,
  layoutOf,
  serveRuns,
  submitRun,
  type JetStreamLayout,
} from '../../src/jetstream/index.js';
import { cancelRequested, readStatus } from '../../src/jetstream/read/status.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { eventually, gone, isAlive, PATIENCE_MS, readWhenWritten, scratch } from '../support/processes.js';
import { hangFiles } from './scenarios.js';
import {
  BROKER,
  connectBroker,
  fixtureEvents,
  ownBroker,
  recordsUntilFinished,
  servedWorker,
  streamsFor,
  suiteStreams,
  uniquePrefix,
  type OwnBroker,
} from './support.js';
import { brokerUsers } from './users.js';
import { startWorker, stopWorkers, type WorkerProcess } from './workers.js';

const contract = fixtureEvents('contract-example.jsonl');

/** Resolves once `check` holds; fails after PATIENCE_MS, saying what did not happen. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${PATIENCE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Requests still in the work queue: delivered or waiting, not acknowledged. */
async function requestsLeft(nc: NatsConnection, layout: JetStreamLayout): Promise<number> {
  return (await (await jetstreamManager(nc)).streams.info(layout.requestsStream)).state.messages;
}

/** Each start the fake CLI logged in `file`: its pid and argv. */
function startsIn(file: string): { pid: number; argv: string[] }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { pid: number; argv: string[] });
}

/** The events a follower got, and the error it ended with. */
async function followed(events$: Observable<unknown>): Promise<{ events: unknown[]; error: unknown }> {
  const notes = await lastValueFrom(events$.pipe(materialize(), toArray()));
  const last = notes.at(-1)!;
  return {
    events: notes.filter((n) => n.kind === 'N').map((n) => n.value),
    error: last.kind === 'E' ? last.error : undefined,
  };
}

/** The fake CLI that logs its start in `starts` and runs until stopped. */
const hanging = (starts: string) => ({
  killGraceMs: 300,
  ...fakeEvoSci([{ record: starts, append: true }, { hang: true }]),
});

describe('cancelling a queued run', () => {
  const { prefix, layout, connection } = suiteStreams('cancel-queued');

  it('never starts it, on a worker started afterwards or later; followers end with CancelledError', async () => {
    const nc = connection();
    const starts = scratch()('starts.jsonl');
    const runId = await submitRun(nc, { prompt: 'never run' }, { prefix });
    const waiting = followed(fromJetStream(nc, runId, { prefix }));
    const cancelling = cancelRun(nc, runId, { prefix });
    // No worker serves yet: the cancel is stored, and waits for one to record the run's end.
    await until('the cancel is stored', () => cancelRequested(nc, layout, runId));
    const worker = servedWorker(nc, {
      prefix,
      runOptions: fakeEvoSci([{ record: starts, append: true }, { transcript: fixturePath('contract-example.jsonl') }]),
    });
    try {
      const outcome = await cancelling;
      expect(outcome).toMatchObject({
        result: 'cancelled-queued',
        record: { record: 'finished', runId, attempt: 0, outcome: 'failed', cancelled: 'queued', events: 0 },
      });
      expect(outcome.record.record === 'finished' && outcome.record.error?.class).toBe('CancelledError');
      expect(await worker.when((a) => a.type === 'cancelled')).toEqual({
        type: 'cancelled',
        runId,
        attempt: 0,
        phase: 'queued',
      });
      // Followers from before and after the cancel end with it, and got no event.
      expect(await waiting).toEqual({ events: [], error: expect.any(CancelledError) });
      expect(await followed(fromJetStream(nc, runId, { prefix }))).toEqual({
        events: [],
        error: expect.any(CancelledError),
      });
      // Its request was acknowledged: nothing is left to deliver again.
      await until('the request is acknowledged', async () => (await requestsLeft(nc, layout)) === 0);
      // The worker goes on: a later run is its only start.
      const later = await submitRun(nc, { prompt: 'later' }, { prefix });
      expect(await lastValueFrom(fromJetStream(nc, later, { prefix }).pipe(toArray()))).toEqual(contract);
      expect(startsIn(starts).map((start) => start.argv)).toEqual([expect.arrayContaining(['--prompt=later'])]);
      // Its status is its end alone, and cancelling again changes nothing.
      expect(await recordsUntilFinished(nc, prefix, runId)).toEqual([outcome.record]);
      expect(await cancelRun(nc, runId, { prefix })).toEqual(outcome);
    } finally {
      worker.stop();
    }
  }, 60_000);
});

describe('a cancel between a worker reading the status and storing its start', () => {
  const { prefix, layout, connection } = suiteStreams('cancel-window');

  it('never starts the CLI, which waits for its started record to be stored and no cancel to be', async () => {
    const nc = connection();
    let spawns = 0;
    const worker = servedWorker(nc, {
      prefix,
      runOptions: (request) => {
        // Past the worker's first check; on the one connection it goes out before the started record.
        nc.publish(layout.cancelSubject(request.runId), '{}');
        return {
          prompt: request.prompt,
          onSpawn: () => spawns++,
          ...fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
        };
      },
    });
    try {
      const runId = await submitRun(nc, { prompt: 'just too late to start' }, { prefix });
      expect(await worker.when((a) => a.type === 'cancelled')).toMatchObject({ runId, attempt: 1, phase: 'queued' });
      // What cancelRun reports of it: the end the worker recorded.
      expect(await cancelRun(nc, runId, { prefix })).toMatchObject({
        result: 'cancelled-queued',
        record: { record: 'finished', runId, attempt: 1, outcome: 'failed', cancelled: 'queued', events: 0 },
      });
      expect(await followed(fromJetStream(nc, runId, { prefix }))).toEqual({
        events: [],
        error: expect.any(CancelledError),
      });
      await until('the request is acknowledged', async () => (await requestsLeft(nc, layout)) === 0);
      expect(spawns).toBe(0);
    } finally {
      worker.stop();
    }
  }, 60_000);
});

describe('cancelling a run in progress on another worker process', () => {
  const prefix = uniquePrefix('cancel-remote');
  const layout = layoutOf({ prefix });
  let nc: NatsConnection;
  let cleanup: (() => Promise<void>) | undefined;
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

  it('stops its CLI and the tool it started, acknowledges the request and ends followers with CancelledError', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-cancel-'));
    const files = hangFiles(dir);
    // A long ack wait: only a request handed back, never a late confirmation, could reach the second worker.
    const first = startWorker(BROKER, prefix, { concurrency: 1, ackWaitMs: 10_000 });
    workers.push(first);
    await first.ready;
    const runId = await submitRun(
      nc,
      { prompt: `hang [${dir}]`, metadata: { scenario: 'hang', tag: dir } },
      { prefix },
    );
    const seen: unknown[] = [];
    const following = followed(fromJetStream(nc, runId, { prefix }).pipe(tap((e) => seen.push(e))));
    const tool = Number(await readWhenWritten(files.grandchild));
    const cli = startsIn(files.starts)[0]!.pid;
    expect(isAlive(cli) && isAlive(tool)).toBe(true);
    // Both events it wrote have reached the follower: the record's count is exact.
    expect(await eventually(() => seen.length === 2)).toBe(true);
    // A second worker, idle, that would take the request if it were handed back.
    const second = startWorker(BROKER, prefix, { concurrency: 1, ackWaitMs: 10_000 });
    workers.push(second);
    await second.ready;

    const outcome = await cancelRun(nc, runId, { prefix });
    expect(outcome).toMatchObject({
      result: 'cancelled-running',
      record: { record: 'finished', runId, attempt: 1, outcome: 'failed', cancelled: 'running', events: 2 },
    });
    expect(outcome.record.record === 'finished' && outcome.record.error?.class).toBe('CancelledError');
    expect(await gone(cli)).toBe(true);
    expect(await gone(tool)).toBe(true);
    expect(await following).toEqual({ events: contract.slice(0, 2), error: expect.any(CancelledError) });
    expect(await eventually(() => first.activity.some((a) => a['type'] === 'cancelled' && a['runId'] === runId))).toBe(
      true,
    );
    expect(first.activity.find((a) => a['type'] === 'cancelled')).toMatchObject({ attempt: 1, phase: 'running' });
    // Acknowledged, not handed back: the work queue holds nothing to deliver again, and it started once.
    await until('the request is acknowledged', async () => (await requestsLeft(nc, layout)) === 0);
    expect(startsIn(files.starts)).toHaveLength(1);
    expect(second.activity.filter((a) => a['runId'] === runId)).toEqual([]);
    expect(await followed(fromJetStream(nc, runId, { prefix }))).toEqual({
      events: contract.slice(0, 2),
      error: expect.any(CancelledError),
    });
  }, 60_000);
});

describe('cancelling a run that has ended', () => {
  const { prefix, layout, connection } = suiteStreams('cancel-ended');

  it('leaves a completed or dead-lettered run as it is', async () => {
    const nc = connection();
    const worker = servedWorker(nc, {
      prefix,
      runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
    });
    try {
      const runId = await submitRun(nc, { prompt: 'completes' }, { prefix });
      expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(contract);
      const before = await readStatus(nc, layout, runId);
      const outcome = await cancelRun(nc, runId, { prefix });
      expect(outcome).toEqual({ result: 'already-ended', record: before?.record });
      expect(outcome.record).toMatchObject({ record: 'finished', outcome: 'completed' });
      expect(await readStatus(nc, layout, runId)).toEqual(before);
      expect(await cancelRequested(nc, layout, runId)).toBe(false);

      // A request the worker refuses (it takes no timeoutMs from requests) is dead-lettered.
      const refused = await submitRun(nc, { prompt: 'refused', timeoutMs: 5000 }, { prefix });
      await expect(lastValueFrom(fromJetStream(nc, refused, { prefix }))).rejects.toBeInstanceOf(DeadLetterError);
      expect(await cancelRun(nc, refused, { prefix })).toMatchObject({
        result: 'already-ended',
        record: { record: 'dead-letter', runId: refused },
      });
    } finally {
      worker.stop();
    }
  }, 60_000);
});

describe('cancelling a run twice', () => {
  const { prefix, layout, connection } = suiteStreams('cancel-twice');

  it('resolves two cancels at once, and a later one, to the same outcome', async () => {
    const nc = connection();
    const starts = scratch()('starts.jsonl');
    const worker = servedWorker(nc, { prefix, runOptions: hanging(starts) });
    try {
      const runId = await submitRun(nc, { prompt: 'twice' }, { prefix });
      await readWhenWritten(starts);
      const [a, b] = await Promise.all([cancelRun(nc, runId, { prefix }), cancelRun(nc, runId, { prefix })]);
      expect(a).toEqual(b);
      expect(a).toMatchObject({ result: 'cancelled-running', record: { attempt: 1, cancelled: 'running' } });
      expect(await cancelRun(nc, runId, { prefix })).toEqual(a);
      expect((await readStatus(nc, layout, runId))?.record).toEqual(a.record);
      expect(await worker.when((a) => a.type === 'cancelled')).toMatchObject({ runId, attempt: 1, phase: 'running' });
      expect(startsIn(starts)).toHaveLength(1);
    } finally {
      worker.stop();
    }
  }, 60_000);
});

describe('cancels on a broker with users', () => {
  const prefix = uniquePrefix('cancel-users');
  const layout = layoutOf({ prefix });
  let broker: OwnBroker;
  let worker: NatsConnection;
  let submitter: NatsConnection;
  let reader: NatsConnection;

  beforeAll(async () => {
    broker = await ownBroker({ config: brokerUsers(prefix), credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    worker = await connect({ servers: broker.url, user: 'worker', pass: 'worker-secret' });
    submitter = await connect({ servers: broker.url, user: 'submitter', pass: 'submitter-secret' });
    reader = await connect({ servers: broker.url, user: 'reader', pass: 'reader-secret' });
    await ensureStreams(worker, { prefix, storage: 'memory' });
  });
  afterAll(async () => {
    await reader?.close();
    await submitter?.close();
    await worker?.close();
    await broker?.dispose();
  });

  it('lets a submitter cancel a queued and a running run, and a user without the permission not', async () => {
    const starts = scratch()('starts.jsonl');
    const activity: { type: string; runId?: string | undefined }[] = [];
    const serving = serveRuns(worker, { prefix, concurrency: 1, runOptions: hanging(starts) }).subscribe((a) =>
      activity.push(a),
    );
    try {
      const running = await submitRun(submitter, { prompt: 'runs' }, { prefix });
      await readWhenWritten(starts);
      // The worker is busy: this one waits in the queue.
      const queued = await submitRun(submitter, { prompt: 'waits' }, { prefix });

      // The server refuses the cancel of a user without the permission; the run goes on.
      const refused = await cancelRun(reader, running, { prefix, timeoutMs: 20_000 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BrokerError);
      expect((refused as Error).message).toMatch(/Permissions Violation/);
      expect(await cancelRequested(submitter, layout, running)).toBe(false);
      expect((await readStatus(submitter, layout, running))?.record).toMatchObject({ record: 'started' });

      // The busy worker records the queued run's end as the cancel reaches its subscription.
      expect(await cancelRun(submitter, queued, { prefix })).toMatchObject({ result: 'cancelled-queued' });
      expect(await cancelRun(submitter, running, { prefix })).toMatchObject({ result: 'cancelled-running' });
      await expect(lastValueFrom(fromJetStream(submitter, queued, { prefix }))).rejects.toBeInstanceOf(CancelledError);
      // Its request, taken once the worker is free, is skipped: one start in all.
      expect(await eventually(() => activity.some((a) => a.type === 'skipped' && a.runId === queued))).toBe(true);
      expect(startsIn(starts)).toHaveLength(1);
    } finally {
      serving.unsubscribe();
    }
  }, 60_000);
});
