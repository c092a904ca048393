// What a request can make a worker do, and what it cannot: the worker's own
// settings win, a request never writes to a run it does not own, a run in
// progress is not started twice, and two prefixes never share a stream.
import { readFileSync } from 'node:fs';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { firstValueFrom, lastValueFrom, of, Subject, take, toArray } from 'rxjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import {
  BrokerError,
  DeadLetterError,
  ensureStreams,
  fromJetStream,
  layoutOf,
  publishTo,
  serveRuns,
  submitRun,
  type ServeRunsOptions,
} from '../../src/jetstream/index.js';
import { readStatus } from '../../src/jetstream/read/status.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { scratch } from '../support/processes.js';
import {
  connectBroker,
  deleteStreams,
  uniquePrefix,
  fixtureEvents,
  suiteStreams,
  recordsUntilFinished,
  servedWorker,
} from './support.js';

const contract = fixtureEvents('contract-example.jsonl');

describe('what a request may do to a worker', () => {
  const { prefix, layout, connection } = suiteStreams('trust');
  let nc: NatsConnection;
  beforeAll(() => {
    nc = connection();
  });

  /** A worker in this process; its activity as it comes, and the first activity that matches. */
  const serve = (options: ServeRunsOptions) => servedWorker(nc, { prefix, ...options });

  /** Publishes a request by hand, as a faulty or hostile client could. */
  async function publishRequest(runId: string, body: Record<string, unknown>): Promise<void> {
    const h = headers();
    h.set('EvoSci-Run-Id', runId);
    await jetstream(nc).publish(layout.requestsSubject, JSON.stringify(body), { headers: h });
  }

  it("runs a request under the worker's settings; a field it does not allow is refused by name", async () => {
    const file = scratch()('argv.json');
    const worker = serve({
      runOptions: {
        autoMode: false,
        timeoutMs: 60_000,
        ...fakeEvoSci([{ record: file, append: true }, { transcript: fixturePath('contract-example.jsonl') }]),
      },
    });
    try {
      const overriding = await submitRun(nc, { prompt: 'override', autoMode: true, timeoutMs: 1e12 }, { prefix });
      const refused = await lastValueFrom(fromJetStream(nc, overriding, { prefix })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DeadLetterError);
      expect((refused as DeadLetterError).reason).toMatch(
        /the request sets "autoMode", which this worker does not take/,
      );

      const plain = await submitRun(nc, { prompt: 'plain', resume: 'thread-7' }, { prefix });
      expect(await lastValueFrom(fromJetStream(nc, plain, { prefix }).pipe(toArray()))).toEqual(contract);
      const argv = (JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!) as { argv: string[] }).argv;
      expect(argv).toEqual(expect.arrayContaining(['--prompt=plain', '--no-auto-mode', '--resume=thread-7']));
    } finally {
      worker.stop();
    }
  }, 30_000);

  it('takes an allowed field from the request, checked as run() checks it', async () => {
    const worker = serve({
      allowFromRequest: ['timeoutMs'],
      runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
    });
    try {
      const bad = await submitRun(nc, { prompt: 'negative', timeoutMs: -5 }, { prefix });
      const refused = await lastValueFrom(fromJetStream(nc, bad, { prefix })).catch((e: unknown) => e);
      expect((refused as DeadLetterError).reason).toMatch(/run: timeoutMs must be a number ≥ 0, got -5/);
      const good = await submitRun(nc, { prompt: 'bounded', timeoutMs: 60_000 }, { prefix });
      expect(await lastValueFrom(fromJetStream(nc, good, { prefix }).pipe(toArray()))).toEqual(contract);
    } finally {
      worker.stop();
    }
    expect(() => serveRuns(nc, { prefix, allowFromRequest: ['command' as 'workdir'] })).toThrow(
      /allowFromRequest takes workdir, autoMode, timeoutMs; got "command"/,
    );
  }, 30_000);

  it("never writes to another run: a bad request naming a completed run leaves that run's status as it was", async () => {
    await lastValueFrom(of(...contract).pipe(publishTo(nc, 'owned-1', { prefix })));
    const worker = serve({ runOptions: fakeEvoSci([]) });
    try {
      await publishRequest('owned-1', { runId: 'owned-1', workdir: '/tmp' });
      const dead = await worker.when((a) => a.type === 'dead-lettered');
      expect(dead).toMatchObject({ runId: 'owned-1', reason: expect.stringMatching(/no prompt.*not recorded/) });
      expect(await lastValueFrom(fromJetStream(nc, 'owned-1', { prefix }).pipe(toArray()))).toEqual(contract);
    } finally {
      worker.stop();
    }
  }, 30_000);

  it('refuses a request whose run id header is not valid or disagrees with its body, and runs neither run', async () => {
    const worker = serve({ runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]) });
    try {
      await publishRequest('../escape', { runId: 'named-in-body-1', prompt: 'p' });
      expect(await worker.when((a) => a.type === 'dead-lettered')).toEqual({
        type: 'dead-lettered',
        runId: undefined,
        reason: 'the request\'s EvoSci-Run-Id header is not a valid run id: "../escape"',
      });
      // Present and empty is not absent.
      await publishRequest('', { runId: 'named-in-body-2', prompt: 'p' });
      expect(await worker.when((a) => a.type === 'dead-lettered' && a.reason.includes('""'))).toMatchObject({
        runId: undefined,
        reason: 'the request\'s EvoSci-Run-Id header is not a valid run id: ""',
      });
      await publishRequest('header-1', { runId: 'body-1', prompt: 'p' });
      expect(await worker.when((a) => a.type === 'dead-lettered' && a.reason.includes('header-1'))).toMatchObject({
        runId: undefined,
        reason: 'the request\'s header names run header-1 and its body "body-1"',
      });
      // No run was started, and none of the run ids named has a status record.
      for (const runId of ['named-in-body-1', 'named-in-body-2', 'header-1', 'body-1'])
        expect(await readStatus(nc, layout, runId)).toBeUndefined();
    } finally {
      worker.stop();
    }
  }, 30_000);

  it('does not start a run again while it is in progress, whatever the duplicate window', async () => {
    const worker = serve({
      concurrency: 2,
      runOptions: fakeEvoSci([{ transcript: fixturePath('examples/transcripts/demo-run.jsonl'), delayMs: 10 }]),
    });
    try {
      const runId = await submitRun(nc, { prompt: 'long' }, { prefix });
      const records = recordsUntilFinished(nc, prefix, runId);
      await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(2)));
      // Submitted again once the stream no longer remembers the first: a new message, no Nats-Msg-Id.
      await publishRequest(runId, { runId, prompt: 'long' });
      const skipped = await worker.when((a) => a.type === 'skipped');
      expect(skipped).toMatchObject({ runId, attempt: 1, reason: 'run already in progress (attempt 1)' });
      expect((await records).map((r) => r.record)).toEqual(['started', 'finished']);
    } finally {
      worker.stop();
    }
  }, 30_000);
});

describe('stream names of two prefixes', () => {
  it('refuses a prefix whose stream names another prefix holds, naming both', async () => {
    const nc = await connectBroker();
    const base = uniquePrefix('collide');
    const first = `${base}.team`;
    const second = `${base}_team`;
    try {
      await ensureStreams(nc, { prefix: first, storage: 'memory' });
      await expect(ensureStreams(nc, { prefix: second, storage: 'memory' })).rejects.toThrow(
        new RegExp(`belongs to prefix "${first.replace('.', '\\.')}", not to prefix "${second}"`),
      );
      const info = await (await jetstreamManager(nc)).streams.info(layoutOf({ prefix: first }).eventsStream);
      expect(info.config.subjects).toEqual([`${first}.run.>`]);
    } finally {
      await deleteStreams(nc, first);
      await nc.close();
    }
  });
});

describe('a run whose start the stream has removed', () => {
  it('errors at once, saying so, instead of waiting for a start that will not come', async () => {
    const nc = await connectBroker();
    const prefix = uniquePrefix('evict');
    const layout = await ensureStreams(nc, { prefix, storage: 'memory' });
    const source = new Subject<EvoEvent>();
    let startSequence = 0;
    const publishing = lastValueFrom(
      source.pipe(publishTo(nc, 'evict-1', { prefix, onStarted: (_, sequence) => (startSequence = sequence) })),
    ).catch(() => undefined);
    try {
      const jsm = await jetstreamManager(nc);
      for (let i = 0; i < 5; i++) source.next({ type: 'text', content: `${i}` });
      while (startSequence === 0) await new Promise((r) => setTimeout(r, 10));
      // As the stream's max_age (or an operator's purge) would: the run's first message, its started record, goes.
      await jsm.streams.deleteMessage(layout.eventsStream, startSequence, false);
      const error = await lastValueFrom(fromJetStream(nc, 'evict-1', { prefix })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerError);
      expect((error as Error).message).toMatch(/the started record of attempt 1 is no longer in stream/);
    } finally {
      source.complete();
      await publishing;
      await deleteStreams(nc, prefix);
      await nc.close();
    }
  }, 30_000);
});
