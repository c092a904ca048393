// Only the current attempt of a run can write it: a superseded attempt's
// records are refused, readers read the newer attempt, and a worker outlives
// a broker call that fails.
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { firstValueFrom, lastValueFrom, of, ReplaySubject, Subject, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import {
  AttemptSupersededError,
  ensureStreams,
  fromJetStream,
  layoutOf,
  publishTo,
  submitRun,
} from '../../src/jetstream/index.js';
import { encodeRecord } from '../../src/jetstream/wire/records.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { gone } from '../support/processes.js';
import { scenarioRun } from './scenarios.js';
import { processesTagged } from './workers.js';
import { connectBroker, fixtureEvents, servedWorker, streamsFor, uniquePrefix, suiteStreams } from './support.js';

const contract = fixtureEvents('contract-example.jsonl');
const research = fixtureEvents('research-run.jsonl');

describe('fenced attempts', () => {
  const { prefix, layout, connection } = suiteStreams('fence');

  it('reads back attempt 2 when a stale attempt 1 completes after it', async () => {
    const nc = connection();
    const runId = 'stale-1';
    await jetstream(nc).publish(
      layout.statusSubject(runId),
      encodeRecord({ record: 'started', runId, attempt: 1, at: new Date().toISOString() }),
    );
    await lastValueFrom(of(...contract).pipe(publishTo(nc, runId, { prefix, attempt: 2 })));
    const stale = await lastValueFrom(of(...research).pipe(publishTo(nc, runId, { prefix, attempt: 1 }))).catch(
      (e: unknown) => e,
    );
    expect(stale).toBeInstanceOf(AttemptSupersededError);
    expect(stale).toMatchObject({ attempt: 1, nextAttempt: 2 });
    expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(contract);
  });

  it('refuses a second writer of the same attempt, whose start was held past the first one', async () => {
    const nc = connection();
    const runId = 'twin-1';
    // Both chose attempt 1 from an empty status: a worker held past the ack wait, and the one given the request meanwhile.
    await lastValueFrom(of(...contract).pipe(publishTo(nc, runId, { prefix, attempt: 1, lastStatusSequence: 0 })));
    const held = await lastValueFrom(
      of(...research).pipe(publishTo(nc, runId, { prefix, attempt: 1, lastStatusSequence: 0 })),
    ).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(AttemptSupersededError);
    expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(contract);
  });

  it('refuses to write again an attempt another writer started and stopped, and the run stays readable', async () => {
    const nc = connection();
    const runId = 'restarted-1';
    const first = new Subject<EvoEvent>();
    const written = new ReplaySubject<EvoEvent>();
    const stopped = first.pipe(publishTo(nc, runId, { prefix })).subscribe(written);
    for (const event of research.slice(0, 3)) first.next(event);
    await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(3), toArray()));
    // Stopped without a finished record, as a process that dies does.
    stopped.unsubscribe();
    const again = await lastValueFrom(of(...research).pipe(publishTo(nc, runId, { prefix }))).catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/attempt 1 was started by another writer .* as attempt 2/);
    await lastValueFrom(of(...contract).pipe(publishTo(nc, runId, { prefix, attempt: 2 })));
    expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(contract);
  });

  it('refuses the finished record of an attempt superseded while it ran', async () => {
    const nc = connection();
    const runId = 'stale-2';
    const first = new Subject<EvoEvent>();
    const attempt1 = lastValueFrom(first.pipe(publishTo(nc, runId, { prefix, attempt: 1 }))).catch((e: unknown) => e);
    first.next(research[0]!);
    first.next(research[1]!);
    // Attempt 1 is stored and being read before attempt 2 starts.
    await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(2), toArray()));
    await lastValueFrom(of(...contract).pipe(publishTo(nc, runId, { prefix, attempt: 2 })));
    for (const event of research.slice(2)) first.next(event);
    first.complete();
    expect(await attempt1).toBeInstanceOf(AttemptSupersededError);
    expect(await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()))).toEqual(contract);
  });
});

describe('a worker whose attempt is superseded while it runs', () => {
  const { prefix, layout, connection } = suiteStreams('superseded');

  it('stops its CLI at its next heartbeat and reports it', async () => {
    const nc = connection();
    const tag = `cli-${prefix}`;
    const { prompt: _prompt, ...slow } = scenarioRun('slow', tag);
    const worker = servedWorker(nc, { prefix, ackWaitMs: 3000, runOptions: slow });
    try {
      const runId = await submitRun(nc, { prompt: `slow [${tag}]` }, { prefix });
      await firstValueFrom(fromJetStream(nc, runId, { prefix }).pipe(take(2), toArray()));
      const [cli] = processesTagged(tag);
      expect(cli).toBeDefined();
      // Another worker took the run over as attempt 2.
      await jetstream(nc).publish(
        layout.statusSubject(runId),
        encodeRecord({ record: 'started', runId, attempt: 2, at: new Date().toISOString(), worker: 'elsewhere' }),
      );
      const superseded = await worker.when((a) => a.type === 'superseded');
      expect(superseded).toMatchObject({ runId, attempt: 1, nextAttempt: 2 });
      expect(await gone(cli!)).toBe(true);
    } finally {
      worker.stop();
    }
  }, 30_000);
});

/** A worker serving the contract transcript on streams of its own, for `body`; everything is removed after it. */
async function withContractWorker(
  name: string,
  body: (nc: NatsConnection, prefix: string, worker: ReturnType<typeof servedWorker>) => Promise<void>,
): Promise<void> {
  const nc = await connectBroker();
  const prefix = uniquePrefix(name);
  const cleanup = await streamsFor(nc, prefix);
  const worker = servedWorker(nc, {
    prefix,
    runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
  });
  try {
    await body(nc, prefix, worker);
  } finally {
    worker.stop();
    await cleanup();
    await nc.close();
  }
}

const readAll = (nc: NatsConnection, runId: string, prefix: string) =>
  lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()));

describe('a worker and a failed broker call', () => {
  it(
    'says once that its pulls fail, makes the deleted consumer again and goes on serving',
    () =>
      withContractWorker('pulls', async (nc, prefix, worker) => {
        const layout = layoutOf({ prefix });
        // A run through first: the worker has its consumer, and a pull waiting on it.
        expect(await readAll(nc, await submitRun(nc, { prompt: 'before' }, { prefix }), prefix)).toEqual(contract);
        await worker.when((a) => a.type === 'finished');
        await (await jetstreamManager(nc)).consumers.delete(layout.requestsStream, layout.workersConsumer);
        expect(await worker.when((a) => a.type === 'retrying')).toMatchObject({ runId: undefined });
        expect(await readAll(nc, await submitRun(nc, { prompt: 'after' }, { prefix }), prefix)).toEqual(contract);
      }),
    60_000,
  );

  it(
    'hands the request back, reports it and goes on serving',
    () =>
      withContractWorker('blip', async (nc, prefix, worker) => {
        // Every status read fails while the events stream is gone.
        await (await jetstreamManager(nc)).streams.delete(layoutOf({ prefix }).eventsStream);
        const runId = await submitRun(nc, { prompt: 'through a blip' }, { prefix });
        expect(await worker.when((a) => a.type === 'retrying')).toMatchObject({ runId });
        await ensureStreams(nc, { prefix, storage: 'memory' });
        expect(await readAll(nc, runId, prefix)).toEqual(contract);
        const finished = await worker.when((a) => a.type === 'finished');
        expect(finished).toMatchObject({ runId, attempt: 1, outcome: 'completed' });
      }),
    30_000,
  );
});
