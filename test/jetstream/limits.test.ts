// The limits on what runs may store, each met on purpose: the events stream's
// max_bytes (full, it refuses rather than remove a run in progress), its
// max_age (a run is stopped before its start would go), a start removed all
// the same, and one run's maxRunBytes. Each ends the run with a
// StorageLimitError that names the limit, told to the writer and its readers.
import type { NatsConnection } from '@nats-io/transport-node';
import { DiscardPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { from, lastValueFrom, Subject, tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import {
  AttemptSupersededError,
  ensureStreams,
  fromJetStream,
  publishTo,
  StorageLimitError,
  streamConfigs,
  submitRun,
} from '../../src/jetstream/index.js';
import { readStatus } from '../../src/jetstream/read/status.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { connectBroker, deleteStreams, servedWorker, uniquePrefix } from './support.js';

const text = (i: number, bytes: number): EvoEvent => ({ type: 'text', content: `${i} ${'x'.repeat(bytes)}` });
/** How a promise settled: 'completed', or its error. */
const outcome = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'completed',
    (e: unknown) => e,
  );
/** All of a run's events as a reader gets them, and how its reading ended: 'completed', or the error's message. */
async function readAll(nc: NatsConnection, runId: string, prefix: string) {
  const events: EvoEvent[] = [];
  const end = await outcome(lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(tap((e) => events.push(e)))));
  return { events, end: end instanceof Error ? end.message : end };
}
/** An error's message, to compare with how a reader's reading ended. */
const messageOf = (error: unknown) => (error as Error).message;

describe('limits on what a run may store', () => {
  let nc: NatsConnection;
  const prefixes: string[] = [];
  /** Streams of their own for one test, with these limits. */
  const streams = async (name: string, limits: { eventsMaxBytes?: number; eventsMaxAgeMs?: number }) => {
    const prefix = uniquePrefix(name);
    prefixes.push(prefix);
    return ensureStreams(nc, { prefix, storage: 'memory', ...limits });
  };
  beforeAll(async () => {
    nc = await connectBroker();
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteStreams(nc, prefix);
    await nc?.close();
  });

  it('a full stream (eventsMaxBytes) refuses the run that meets it, naming the limit, and removes no other run', async () => {
    const { prefix, eventsStream } = await streams('full', { eventsMaxBytes: 200_000 });
    // Some 100 kB of a run that ended; then a run of small events and one of 150 kB, for which there is no room.
    const first = Array.from({ length: 50 }, (_, i) => text(i, 2000));
    expect(await outcome(lastValueFrom(from(first).pipe(publishTo(nc, 'first', { prefix }))))).toBe('completed');
    const second = [...Array.from({ length: 10 }, (_, i) => text(i, 1000)), text(10, 150_000)];
    const error = await outcome(lastValueFrom(from(second).pipe(publishTo(nc, 'second', { prefix }))));
    expect(error).toBeInstanceOf(StorageLimitError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^run second attempt 1: stream ${eventsStream} has no room \\(maximum bytes exceeded; max_bytes 200000, max_age 7 d\\)`,
      ),
    );
    // Its readers are told the same, after the events it stored; the run stored before is whole.
    expect(await readAll(nc, 'second', prefix)).toEqual({ events: second.slice(0, 10), end: messageOf(error) });
    expect(await readAll(nc, 'first', prefix)).toEqual({ events: first, end: 'completed' });
  }, 30_000);

  it('ensureStreams turns an events stream that discarded its oldest messages to refusing new ones', async () => {
    const prefix = uniquePrefix('discard');
    prefixes.push(prefix);
    const jsm = await jetstreamManager(nc);
    const { events } = streamConfigs({ prefix, storage: 'memory', eventsMaxBytes: 200_000 });
    // As an earlier version made it.
    await jsm.streams.add({ ...events, discard: DiscardPolicy.Old });
    await ensureStreams(nc, { prefix, storage: 'memory', eventsMaxBytes: 200_000 });
    expect((await jsm.streams.info(events.name)).config).toMatchObject({
      discard: DiscardPolicy.New,
      max_bytes: 200_000,
    });
  });

  it('a worker whose run finds no room hands its request back, naming the limit, and takes it again after a pause', async () => {
    const { prefix, eventsStream } = await streams('no-room', { eventsMaxBytes: 50_000 });
    // Filled to the last bytes: not even a run's started record fits.
    const js = jetstream(nc);
    for (let size = 1000; size >= 1; size = Math.floor(size / 2))
      while (
        await js.publish(`${prefix}.run.filler.1`, new Uint8Array(size)).then(
          () => true,
          () => false,
        )
      );
    const worker = servedWorker(nc, {
      prefix,
      runOptions: fakeEvoSci([{ lines: ['{"type": "text", "content": "a"}'] }]),
    });
    try {
      const runId = await submitRun(nc, { prompt: 'no room' }, { prefix });
      const returned = await worker.when((a) => a.runId === runId && a.type !== 'started');
      const at = Date.now();
      expect(returned).toMatchObject({ type: 'returned', error: expect.any(StorageLimitError) });
      expect((returned as { error: Error }).error.message).toMatch(
        new RegExp(
          `^run ${runId} attempt 1: stream ${eventsStream} has no room \\(maximum bytes exceeded; max_bytes 50000`,
        ),
      );
      // Not taken again at once: room comes back only as runs age out.
      let n = 0;
      await worker.when((a) => a.runId === runId && a.type === 'returned' && ++n === 2);
      expect(Date.now() - at).toBeGreaterThan(4000);
    } finally {
      worker.stop();
    }
  }, 30_000);

  it('a run alone past eventsMaxBytes is told the limit, not a false supersede, and keeps its start', async () => {
    const layout = await streams('alone', { eventsMaxBytes: 200_000 });
    // The case that used to discard the run's own started record while it was written.
    const events = Array.from({ length: 300 }, (_, i) => text(i, 1000));
    const error = await outcome(lastValueFrom(from(events).pipe(publishTo(nc, 'big', { prefix: layout.prefix }))));
    expect(error).toBeInstanceOf(StorageLimitError);
    expect(error).not.toBeInstanceOf(AttemptSupersededError);
    expect((error as Error).message).toMatch(/has no room \(maximum bytes exceeded; max_bytes 200000/);
    // Nothing was removed for room: the run's started record is still the stream's first message.
    expect((await (await jetstreamManager(nc)).streams.info(layout.eventsStream)).state.first_seq).toBe(1);
    expect((await readStatus(nc, layout, 'big'))?.record).toMatchObject({ attempt: 1 });
  }, 30_000);

  it('a run that would outlive the stream’s max_age is stopped before its start goes, naming the limit', async () => {
    const { prefix } = await streams('age', { eventsMaxAgeMs: 3000 });
    const worker = servedWorker(nc, {
      prefix,
      runOptions: fakeEvoSci([{ lines: ['{"type": "text", "content": "a"}'] }, { hang: true }]),
    });
    try {
      const runId = await submitRun(nc, { prompt: 'long' }, { prefix });
      const reading = readAll(nc, runId, prefix);
      const end = await worker.when((a) => a.runId === runId && a.type !== 'started');
      // Stopped at the age less its margin (1 s of 3 s), its end recorded: not run again.
      expect(end).toMatchObject({ type: 'finished', outcome: 'failed', error: expect.any(StorageLimitError) });
      const message = (end as { error: Error }).error.message;
      expect(message).toMatch(
        new RegExp(
          `^run ${runId} attempt 1: stopped after [\\d.]+ s, before stream \\S+ removes its started record \\(max_age 3 s\\)`,
        ),
      );
      expect(await reading).toEqual({
        events: [{ type: 'text', content: 'a' }],
        end: message,
      });
    } finally {
      worker.stop();
    }
  }, 30_000);

  it('a start removed while the run is written is said, not taken for a newer attempt', async () => {
    const layout = await streams('purged', {});
    const source = new Subject<EvoEvent>();
    let started!: () => void;
    const stored = new Promise<void>((resolve) => (started = resolve));
    const writing = outcome(
      lastValueFrom(source.pipe(publishTo(nc, 'purged', { prefix: layout.prefix, onStarted: () => started() }))),
    );
    source.next(text(1, 10));
    await stored;
    // As a limit the writer did not foresee (or an operator) would.
    await (await jetstreamManager(nc)).streams.purge(layout.eventsStream, { filter: layout.statusSubject('purged') });
    source.next(text(2, 10));
    source.complete();
    const error = await writing;
    expect(error).toBeInstanceOf(StorageLimitError);
    expect((error as Error).message).toMatch(
      /^run purged attempt 1: its started record \(stream sequence 1\) was removed from stream \S+ while the run was written/,
    );
    // Its end is recorded all the same, so that readers are told too.
    expect(await readAll(nc, 'purged', layout.prefix)).toEqual({
      events: [text(1, 10), text(2, 10)],
      end: messageOf(error),
    });
  }, 30_000);

  it('maxRunBytes caps one run: its CLI is stopped, and the error naming the cap is recorded', async () => {
    const { prefix } = await streams('cap', {});
    const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify(text(i, 1000)));
    const exits: unknown[] = [];
    const error = await outcome(
      lastValueFrom(
        run({ prompt: 'x', ...fakeEvoSci([{ lines }, { hang: true }]), onExit: (info) => exits.push(info) }).pipe(
          publishTo(nc, 'capped', { prefix, maxRunBytes: 50_000 }),
        ),
      ),
    );
    expect(error).toBeInstanceOf(StorageLimitError);
    // 1 000-byte texts of some 1 030 bytes a line: the 49th passes 50 000.
    expect((error as Error).message).toBe(
      'run capped attempt 1: its events passed maxRunBytes (50000 bytes) at event 49; stopped',
    );
    const read = await readAll(nc, 'capped', prefix);
    expect(read.events).toHaveLength(48);
    expect(read.end).toBe(messageOf(error));
    // The hanging CLI was stopped with the run.
    while (exits.length === 0) await new Promise((r) => setTimeout(r, 20));
  }, 30_000);
});
