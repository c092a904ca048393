// A run's end is written only once its events are all stored. Before its
// `finished` record, a writer compares the count of messages on its
// attempt's subject (the stream leader's) with what it sent, and sends a
// missing one again under a fresh Nats-Msg-Id. Here a message is removed
// from the stream (as a leader change can lose an acknowledged write) after
// its ack and before the run ends: the run is still read whole.
import { jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { fromJetStream, publishTo } from '../../src/jetstream/index.js';
import { until } from './cluster/readersSupport.js';
import { suiteStreams } from './support.js';

const EVENTS = 10;

describe('the end of a run', () => {
  const streams = suiteStreams('check');

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
});
