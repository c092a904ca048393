// A worker killed mid-run: its CLI dies with it, the request goes to another
// worker as attempt 2, and consumers never get a half attempt mixed in. After
// the last attempt, and for a request that cannot run, a dead-letter record.
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { firstValueFrom, lastValueFrom, materialize, take, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AttemptSupersededError,
  DeadLetterError,
  fromJetStream,
  layoutOf,
  positionOf,
  submitRun,
  type EventPosition,
  type StatusRecord,
} from '../../src/jetstream/index.js';
import { eventually, PATIENCE_MS } from '../support/processes.js';
import { BROKER, connectBroker, streamsFor, uniquePrefix, fixtureEvents, recordsUntilFinished } from './support.js';
import { processesTagged, startWorker, stopWorkers, type WorkerProcess } from './workers.js';

const demo = fixtureEvents('examples/transcripts/demo-run.jsonl');

describe('redelivery and dead letters', () => {
  const prefix = uniquePrefix('redeliver');
  let nc: NatsConnection;
  let cleanup: () => Promise<void>;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    nc = await connectBroker();
    cleanup = await streamsFor(nc, prefix);
  });
  afterEach(async () => {
    await stopWorkers(workers);
    workers.length = 0;
  });
  afterAll(async () => {
    await cleanup?.();
    await nc?.close();
  });

  /** A worker process, and a slow run on it whose CLI processes carry `tag`. */
  async function slowRun(name: string, maxAttempts?: number) {
    const tag = `cli-${name}-${prefix}`;
    const first = startWorker(BROKER, prefix, { ackWaitMs: 1500, ...(maxAttempts ? { maxAttempts } : {}) });
    workers.push(first);
    await first.ready;
    const runId = await submitRun(nc, { prompt: `slow [${tag}]`, metadata: { scenario: 'slow', tag } }, { prefix });
    return { tag, first, runId };
  }

  it('a SIGKILLed worker’s run is stopped with it and completes on another worker as attempt 2', async () => {
    const { tag, first, runId } = await slowRun('kill');

    // A consumer following attempt 1 sees some of it, then the attempt is superseded.
    const following = lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(materialize(), toArray()));
    const someOfAttempt1 = await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(10), toArray()));
    expect(someOfAttempt1).toEqual(demo.slice(0, 10));
    expect(positionOf(someOfAttempt1[9]!)).toMatchObject({ runId, attempt: 1, sequence: 10 });
    expect(processesTagged(tag)).toHaveLength(1);

    first.child.kill('SIGKILL');
    await first.exited;
    // The lifeline stops the CLI that the dead worker could not.
    expect(await eventually(() => processesTagged(tag).length === 0)).toBe(true);

    const second = startWorker(BROKER, prefix, { ackWaitMs: 1500 });
    workers.push(second);
    const notes = await following;
    const last = notes.at(-1)!;
    expect(
      last.kind,
      JSON.stringify({ n: notes.length, first: first.activity, second: second.activity, err: second.stderr() }),
    ).toBe('E');
    expect(last.error).toBeInstanceOf(AttemptSupersededError);
    expect(last.error).toMatchObject({ runId, attempt: 1, nextAttempt: 2 });
    // What it emitted before is a prefix of attempt 1, nothing of attempt 2 mixed in.
    const emitted = notes.filter((n) => n.kind === 'N').map((n) => n.value);
    expect(emitted).toEqual(demo.slice(0, emitted.length));

    // A new subscription follows attempt 2 from its start to its end.
    const attempt2 = await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()));
    expect(attempt2).toEqual(demo);
    expect(positionOf(attempt2[0]!)).toMatchObject({ attempt: 2, sequence: 1 });
    expect(
      await eventually(() =>
        second.activity.some((a) => a['type'] === 'finished' && a['runId'] === runId && a['attempt'] === 2),
      ),
    ).toBe(true);
    // Resuming from a position of the superseded attempt is refused at once.
    const stale: EventPosition = positionOf(someOfAttempt1[9]!)!;
    await expect(lastValueFrom(fromJetStream(nc, runId, { prefix, after: stale }))).rejects.toBeInstanceOf(
      AttemptSupersededError,
    );
  }, 60_000);

  it('numbers attempts by the attempts started, not by deliveries: a delivery whose worker dies before starting it skips none', async () => {
    const layout = layoutOf({ prefix });
    const { first, runId } = await slowRun('lost');
    const records = recordsUntilFinished(nc, prefix, runId);
    await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(3), toArray()));
    first.child.kill('SIGKILL');
    await first.exited;

    // A worker that takes the request once it is due again, and dies before it starts it.
    const consumer = await jetstream(nc).consumers.get(layout.requestsStream, layout.workersConsumer);
    const lost = await consumer.next({ expires: 30_000 });
    expect(lost?.info.deliveryCount).toBe(2);

    const second = startWorker(BROKER, prefix, { ackWaitMs: 1500 });
    workers.push(second);
    const written: StatusRecord[] = await records;
    expect(written.map((r) => [r.record, r.record === 'dead-letter' ? 0 : r.attempt])).toEqual([
      ['started', 1],
      ['started', 2],
      ['finished', 2],
    ]);
    expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(demo);
  }, 60_000);

  it('keeps a run whose worker confirmed it late: the request delivered to it again is not a new attempt', async () => {
    const { first, runId } = await slowRun('late');
    const records = recordsUntilFinished(nc, prefix, runId);
    const events = lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()));
    await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(3), toArray()));
    // The worker holds still past its ack wait until the server has given the request out again; this
    // worker, the only one, with a pull still open, is the one that takes it.
    first.child.kill('SIGSTOP');
    expect(await redelivered()).toBe(true);
    first.child.kill('SIGCONT');
    expect(await events).toEqual(demo);
    expect((await records).map((r) => [r.record, r.record === 'dead-letter' ? 0 : r.attempt])).toEqual([
      ['started', 1],
      ['finished', 1],
    ]);
  }, 60_000);

  /** Whether the workers' consumer has handed a request out again, within the patience of a test. */
  async function redelivered(): Promise<boolean> {
    const layout = layoutOf({ prefix });
    const jsm = await jetstreamManager(nc);
    const until = Date.now() + PATIENCE_MS;
    while (Date.now() < until) {
      const info = await jsm.consumers.info(layout.requestsStream, layout.workersConsumer);
      if (info.num_redelivered > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  it('after its last attempt a run ends in a dead-letter record that gives the reason', async () => {
    const { tag, first, runId } = await slowRun('dead', 1);
    await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(3), toArray()));
    first.child.kill('SIGKILL');
    await first.exited;
    workers.push(startWorker(BROKER, prefix, { ackWaitMs: 1500, maxAttempts: 1 }));

    const error = await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray())).then(
      () => undefined,
      (err: unknown) => err,
    );
    // The live consumer sees attempt 1 superseded? No: no attempt 2 starts; it waits for the dead letter.
    expect(error).toBeInstanceOf(DeadLetterError);
    expect((error as DeadLetterError).reason).toMatch(
      /worker stopped before the run finished in each of 1 attempts, last on test-worker-\d+/,
    );
    expect(await eventually(() => processesTagged(tag).length === 0)).toBe(true);
  }, 60_000);

  it('a request without a prompt is dead-lettered at once with that reason', async () => {
    workers.push(startWorker(BROKER, prefix));
    const layout = layoutOf({ prefix });
    const h = headers();
    h.set('EvoSci-Run-Id', 'no-prompt-1');
    await jetstream(nc).publish(layout.requestsSubject, JSON.stringify({ runId: 'no-prompt-1', workdir: '/tmp' }), {
      headers: h,
    });
    const error = await lastValueFrom(fromJetStream(nc, 'no-prompt-1', { prefix })).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DeadLetterError);
    expect((error as Error).message).toBe(
      'run no-prompt-1 was dead-lettered: the request has no prompt: a non-empty string "prompt" is required',
    );
    // And submitRun refuses one before it is sent.
    await expect(submitRun(nc, { prompt: '' }, { prefix })).rejects.toThrow(/prompt must be a non-empty string/);
  }, 30_000);
});
