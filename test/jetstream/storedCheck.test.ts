// A run's end is written only once its events are all stored. Before its
// `finished` record, a writer compares the count of messages on its
// attempt's subject (the stream leader's) with what it sent, and sends a
// missing one again under a fresh Nats-Msg-Id. Here a message is removed
// from the stream (as a leader change can lose an acknowledged write) after
// its ack and before the run ends: the run is still read whole, unless the
// message is older than the last 256 the writer keeps, or the writer is
// unsubscribed meanwhile.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { BrokerError, fromJetStream, publishTo } from '../../src/jetstream/index.js';
import { AttemptMessages } from '../../src/jetstream/write/AttemptMessages.js';
import { publishStored } from '../../src/jetstream/write/publishStored.js';
import { StoredCheck } from '../../src/jetstream/write/StoredCheck.js';
import type { JetStreamLayout } from '../../src/jetstream/wire/layout.js';
import { until } from './cluster/readersSupport.js';
import { suiteStreams } from './support.js';

const EVENTS = 10;
/** More messages than the 256 a writer keeps to send again: events 45 to 300 are the last 256. */
const PAST_KEPT = 300;
const TIMING = { ackTimeoutMs: 5000, retryForMs: 30_000 };

/** The count of messages on `subject`, as the stream answers. */
async function countOf(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  return (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
}

/** The stream sequence of event `sequence` of `subject`, read through the stream. */
async function streamSequenceOf(jsm: JetStreamManager, stream: string, subject: string, sequence: number) {
  const { first_seq: first, last_seq: last } = (await jsm.streams.info(stream)).state;
  for (let seq = first; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m?.subject === subject && m.header.get('EvoSci-Seq') === String(sequence)) return seq;
  }
  throw new Error(`event ${sequence} is not on ${subject}`);
}

/**
 * A check over `events` events of attempt 1 of `runId`, each stored as the
 * writer stores it; the stream sequence of each, by event.
 */
async function storedAttempt(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
  events: number,
  page?: number,
) {
  const messages = new AttemptMessages({
    layout,
    runId,
    attempt: 1,
    worker: undefined,
    prompt: undefined,
    requestSequence: undefined,
  });
  const check = new StoredCheck(nc, layout.eventsStream, messages, TIMING, 1 << 20, page);
  const acks = Array.from({ length: events }, (_, i) => {
    const data = Buffer.from(`{"type":"text","content":"event ${i + 1}"}\n`);
    check.sent(i + 1, data, undefined);
    return publishStored(nc, messages.event(i + 1, undefined), data, TIMING);
  });
  const sequences = (await Promise.all(acks)).map((ack) => ack.seq);
  return { check, sequences, subject: messages.event(1, undefined).subject };
}

/** `events` text events into `source`, the i-th saying `event i`. */
function emit(source: Subject<EvoEvent>, events: number): void {
  for (let i = 1; i <= events; i++) source.next({ type: 'text', content: `event ${i}` });
}

describe('the end of a run', () => {
  const streams = suiteStreams('check');
  afterEach(() => vi.restoreAllMocks());

  it('is written once a message the stream lost is sent again, under a fresh id', async () => {
    const nc = streams.connection();
    const { layout, prefix } = streams;
    const jsm = await jetstreamManager(nc);
    const subject = layout.attemptSubject('r1', 1);
    const source = new Subject<EvoEvent>();
    const written = lastValueFrom(source.pipe(publishTo(nc, 'r1', { prefix }), toArray()));
    for (let i = 1; i <= EVENTS; i++) source.next({ type: 'text', content: `event ${i}` });
    // A sign that every event is stored: the subject's count.
    const count = async () =>
      (await jsm.streams.info(layout.eventsStream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
    await until(async () => ((await count()) === EVENTS ? true : undefined));
    const { first_seq: first, last_seq: last } = (await jsm.streams.info(layout.eventsStream)).state;
    let lost = 0;
    for (let seq = first; seq <= last && lost === 0; seq++) {
      const m = await jsm.streams.getMessage(layout.eventsStream, { seq });
      if (m?.subject === subject && m.header.get('EvoSci-Seq') === '4') lost = seq;
    }
    expect(await jsm.streams.deleteMessage(layout.eventsStream, lost)).toBe(true);
    source.complete();
    expect(await written).toHaveLength(EVENTS);
    expect(await count()).toBe(EVENTS);
    const again = await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: subject });
    expect(again?.header.get('EvoSci-Seq')).toBe('4');
    expect(again?.header.get('Nats-Msg-Id')).toBe('r1.1.4.again1');
    const read = await lastValueFrom(fromJetStream(nc, 'r1', { prefix }).pipe(toArray()));
    expect(read.map((e) => (e as { content: string }).content)).toEqual(
      Array.from({ length: EVENTS }, (_, i) => `event ${i + 1}`),
    );
  });

  it('is written only once every event is read back, when a duplicate makes the count match with one missing', async () => {
    const nc = streams.connection();
    const { layout, prefix } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const subject = layout.attemptSubject('r2', 1);
    const source = new Subject<EvoEvent>();
    const written = lastValueFrom(source.pipe(publishTo(nc, 'r2', { prefix }), toArray()));
    for (let i = 1; i <= EVENTS; i++) source.next({ type: 'text', content: `event ${i}` });
    await until(async () => ((await countOf(jsm, stream, subject)) === EVENTS ? true : undefined));
    for (const sequence of [4, 6])
      expect(await jsm.streams.deleteMessage(stream, await streamSequenceOf(jsm, stream, subject, sequence))).toBe(
        true,
      );
    // A copy of event 9 holds the id of the first re-send of event 6 (as an
    // original still "in process" would): the stream drops that re-send, and
    // after it the subject's count is what was sent, with event 6 missing.
    const nine = await jsm.streams.getMessage(stream, { seq: await streamSequenceOf(jsm, stream, subject, 9) });
    const copied: Record<string, string> = {};
    for (const name of nine!.header.keys()) if (name !== 'Nats-Msg-Id') copied[name] = nine!.header.get(name);
    await publishStored(nc, { subject, msgID: 'r2.1.6.again1', headers: copied }, nine!.data, TIMING);
    source.complete();
    expect(await written).toHaveLength(EVENTS);
    const idOf = async (sequence: number) =>
      (
        await jsm.streams.getMessage(stream, { seq: await streamSequenceOf(jsm, stream, subject, sequence) })
      )?.header.get('Nats-Msg-Id');
    expect(await idOf(4)).toBe('r2.1.4.again1');
    expect(await idOf(6)).toBe('r2.1.6.again2');
    const read = await lastValueFrom(fromJetStream(nc, 'r2', { prefix }).pipe(toArray()));
    expect(read.map((e) => (e as { content: string }).content)).toEqual(
      Array.from({ length: EVENTS }, (_, i) => `event ${i + 1}`),
    );
  });

  it('is neither repaired nor written once its writer is unsubscribed while the check reads the attempt back', async () => {
    const nc = streams.connection();
    const { layout, prefix } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const subject = layout.attemptSubject('r3', 1);
    // The writer's check, kept to await its end: after it the writer sends nothing.
    const checks: Promise<void>[] = [];
    const complete = StoredCheck.prototype.complete;
    vi.spyOn(StoredCheck.prototype, 'complete').mockImplementation(function (this: StoredCheck, stop) {
      checks.push(complete.call(this, stop));
      return checks.at(-1)!;
    });
    const source = new Subject<EvoEvent>();
    const writer = source.pipe(publishTo(nc, 'r3', { prefix })).subscribe({ error: () => undefined });
    emit(source, EVENTS);
    await until(async () => ((await countOf(jsm, stream, subject)) === EVENTS ? true : undefined));
    expect(await jsm.streams.deleteMessage(stream, await streamSequenceOf(jsm, stream, subject, 4))).toBe(true);
    // Unsubscribed as the check, having found the subject short, starts reading it back.
    const readingBack = new Promise<void>((resolve) => {
      const sub = nc.subscribe('$JS.API.CONSUMER.CREATE.>', {
        callback: (_, m) => {
          if (!m.subject.startsWith(`$JS.API.CONSUMER.CREATE.${stream}.`)) return;
          writer.unsubscribe();
          sub.unsubscribe();
          resolve();
        },
      });
    });
    source.complete();
    await readingBack;
    expect(checks).toHaveLength(1);
    await expect(checks[0]).rejects.toThrow(/abort/i);
    // Stored after anything the writer sent on this connection before it.
    await jetstream(nc).publish(layout.attemptSubject('probe', 1), 'probe');
    expect(await countOf(jsm, stream, subject)).toBe(EVENTS - 1);
    const status = layout.statusSubject('r3');
    expect(await countOf(jsm, stream, status)).toBe(1);
    expect((await jsm.streams.getMessage(stream, { last_by_subj: status }))?.json()).toMatchObject({
      record: 'started',
    });
  });
});

describe('the end of a run that lost an event older than the last 256 messages its writer keeps', () => {
  const streams = suiteStreams('oldloss');

  /**
   * Writes run `runId` of 300 events and removes event 44 once all are
   * stored: the newest event its writer no longer keeps (one later and it
   * would be sent again). What the writer's Observable ended with.
   */
  async function losingEvent44(runId: string): Promise<unknown> {
    const nc = streams.connection();
    const { layout, prefix } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const subject = layout.attemptSubject(runId, 1);
    const source = new Subject<EvoEvent>();
    const written = lastValueFrom(source.pipe(publishTo(nc, runId, { prefix }), toArray()));
    emit(source, PAST_KEPT);
    await until(async () => ((await countOf(jsm, stream, subject)) === PAST_KEPT ? true : undefined));
    expect(await jsm.streams.deleteMessage(stream, await streamSequenceOf(jsm, stream, subject, 44))).toBe(true);
    source.complete();
    return written.then(
      () => undefined,
      (err: unknown) => err,
    );
  }

  it('is recorded as failed, with an error naming the event, and the event is not sent again', async () => {
    const nc = streams.connection();
    const { layout } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const subject = layout.attemptSubject('old', 1);
    const error = await losingEvent44('old');
    expect(error).toBeInstanceOf(BrokerError);
    expect((error as Error).message).toBe(
      `event 44 is missing from ${subject} in stream ${stream}, and is no longer held to be sent again`,
    );
    expect(await countOf(jsm, stream, subject)).toBe(PAST_KEPT - 1);
    const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    expect(last?.header.get('Nats-Msg-Id')).toBe(`old.1.${PAST_KEPT}`);
    // Its status: `started`, then the end the writer recorded as it failed, counting the events
    // before the lost one; never `completed`.
    const status = layout.statusSubject('old');
    expect(await countOf(jsm, stream, status)).toBe(2);
    const end = await jsm.streams.getMessage(stream, { last_by_subj: status });
    expect(end?.json()).toMatchObject({
      record: 'finished',
      outcome: 'failed',
      events: 43,
      error: { class: 'BrokerError', message: (error as Error).message },
    });
  });

  it('is read as the events stored before the lost one, then the error its writer recorded', async () => {
    const nc = streams.connection();
    const error = await losingEvent44('read');
    const read: string[] = [];
    const ended = await lastValueFrom(
      fromJetStream(nc, 'read', { prefix: streams.prefix }).pipe(
        tap((e) => read.push((e as { content: string }).content)),
      ),
    ).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(read).toEqual(Array.from({ length: 43 }, (_, i) => `event ${i + 1}`));
    expect(ended).toBeInstanceOf(BrokerError);
    expect((ended as Error).message).toBe((error as Error).message);
  });
});

describe('the check of what an attempt stored', () => {
  const streams = suiteStreams('checkread');

  it('reads back an attempt of more messages than one fetch brings, page by page, and sends again only the missing one', async () => {
    const nc = streams.connection();
    const { layout } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const { check, sequences, subject } = await storedAttempt(nc, layout, 'paged', 1000, 100);
    expect(await jsm.streams.deleteMessage(stream, sequences[994]!)).toBe(true);
    // Each fetch of the read-back is a pull request to its consumer.
    let pulls = 0;
    const sub = nc.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${stream}.>`, {
      callback: () => {
        pulls++;
      },
    });
    await check.complete();
    await nc.flush();
    sub.unsubscribe();
    expect(pulls).toBeGreaterThanOrEqual(10);
    expect(await countOf(jsm, stream, subject)).toBe(1000);
    const again = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    expect(again?.header.get('EvoSci-Seq')).toBe('995');
    expect(again?.header.get('Nats-Msg-Id')).toBe('paged.1.995.again1');
  });

  it('sends nothing again once stopped', async () => {
    const nc = streams.connection();
    const { layout } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const { check, sequences, subject } = await storedAttempt(nc, layout, 'stopped', EVENTS);
    expect(await jsm.streams.deleteMessage(stream, sequences[3]!)).toBe(true);
    const stop = new AbortController();
    // Stopped as the check, having found the subject short, starts reading it back.
    const sub = nc.subscribe('$JS.API.CONSUMER.CREATE.>', {
      callback: (_, m) => {
        if (m.subject.startsWith(`$JS.API.CONSUMER.CREATE.${stream}`)) stop.abort();
      },
    });
    await expect(check.complete(stop.signal)).rejects.toThrow(/abort/i);
    sub.unsubscribe();
    expect(stop.signal.aborted).toBe(true);
    expect(await countOf(jsm, stream, subject)).toBe(EVENTS - 1);
    const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    expect(last?.header.get('Nats-Msg-Id')).toBe(`stopped.1.${EVENTS}`);
  });

  it('sends again an event lost from among the last 256 messages sent, the oldest of them', async () => {
    const nc = streams.connection();
    const { layout } = streams;
    const stream = layout.eventsStream;
    const jsm = await jetstreamManager(nc);
    const { check, sequences, subject } = await storedAttempt(nc, layout, 'oldest', PAST_KEPT);
    expect(await jsm.streams.deleteMessage(stream, sequences[44]!)).toBe(true);
    await check.complete();
    expect(await countOf(jsm, stream, subject)).toBe(PAST_KEPT);
    const again = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    expect(again?.header.get('EvoSci-Seq')).toBe('45');
    expect(again?.header.get('Nats-Msg-Id')).toBe('oldest.1.45.again1');
  });
});
