// Where a run's reader reads again after a gap. A publish sent again after a
// leader change stores its event after later ones (seen on a cluster: events
// 8 and 9 at stream sequences 65 and 131, events 6 and 7 at 313 and 353),
// and the copy a reader read may have skipped any message: so a reader reads
// the attempt again from its start, never from past the last message it took.
import { jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromJetStream } from '../../src/jetstream/index.js';
import { OrderedReader, type ReadTarget } from '../../src/jetstream/read/OrderedReader.js';
import { suiteStreams, writeByHand } from './support.js';

/**
 * The servers' copies of a stream as a reader reads them: the first copy
 * lacks the messages `skipped` (a replica that fell behind and caught up past
 * them), the second is whole. What the reader is told to read again from, and
 * where, is recorded.
 */
class Copies {
  readonly rereadFrom: number[] = [];
  private read = 0;

  constructor(
    private readonly stored: readonly JsMsg[],
    private readonly skipped: ReadonlySet<number>,
  ) {}

  open(target: ReadTarget): OrderedReader {
    const deliver = (from: number, skip: ReadonlySet<number>) =>
      setImmediate(() => {
        for (const m of this.stored) if (m.seq >= from && !skip.has(m.seq)) target.onMessage(m);
      });
    deliver(0, this.skipped);
    const servers = () => ['n0', 'n1'].slice(0, this.read + 1);
    return {
      get servers() {
        return servers();
      },
      rereadElsewhere: (sequence: number) => {
        if (++this.read > 1) return Promise.resolve(false);
        this.rereadFrom.push(sequence);
        deliver(sequence, new Set());
        return Promise.resolve(true);
      },
      stop: () => undefined,
    } as unknown as OrderedReader;
  }
}

describe('a run read again after a gap', () => {
  const streams = suiteStreams('gaps');
  afterEach(() => vi.restoreAllMocks());

  it('reads from the attempt start, so events stored before the last one taken are not skipped', async () => {
    const nc = streams.connection();
    const { layout } = streams;
    const order = [1, 2, 3, 4, 5, 8, 9, 10, 6, 7];
    const line = (seq: number) => `{"type":"text","content":"event ${seq}"}`;
    await writeByHand(
      nc,
      layout,
      'r1',
      order.map((seq) => ({ seq, payload: line(seq) })),
      10,
    );
    const jsm = await jetstreamManager(nc);
    const stored: JsMsg[] = [];
    const { last_seq: last } = (await jsm.streams.info(layout.eventsStream)).state;
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(layout.eventsStream, { seq });
      if (m?.subject.includes('.run.r1.'))
        stored.push({ subject: m.subject, seq, data: m.data, headers: m.header } as unknown as JsMsg);
    }
    // The first copy lacks event 10, stored before events 6 and 7: the last messages taken in order.
    const event10 = stored.find((m) => m.headers?.get('EvoSci-Seq') === '10')!.seq;
    const copies = new Copies(stored, new Set([event10]));
    vi.spyOn(OrderedReader, 'open').mockImplementation((_nc, target) => copies.open(target));
    const events = await lastValueFrom(fromJetStream(nc, 'r1', { prefix: streams.prefix }).pipe(toArray()));
    expect(events.map((e) => (e as { content: string }).content)).toEqual(
      Array.from({ length: 10 }, (_, i) => `event ${i + 1}`),
    );
    // From the started record, the stream's first message of the run.
    expect(copies.rereadFrom).toEqual([stored[0]!.seq]);
  });
});
