// fromJetStream with a `flow`: paused, it asks the broker for nothing more;
// resumed, it goes on with the next event, its parts and events stored out of
// order put back as without a flow, and a consumer gone meanwhile made again.
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import type { EvoEvent } from '../../src/events/codecs.js';
import { fromJetStream, type BrokerError } from '../../src/jetstream/index.js';
import { PACED_PULL_MESSAGES } from '../../src/jetstream/read/PacedPull.js';
import { suiteStreams, writeByHand, type HandWritten } from './support.js';

const EVENTS = 600;
const payload = (i: number) => JSON.stringify({ type: 'text', content: `e${i}` });

/** The run's messages: event 3 in three parts, event 7 stored after event 8, the rest in order. */
function messages(): HandWritten[] {
  const written: HandWritten[] = [];
  for (let i = 1; i <= EVENTS; i++) {
    if (i === 3) {
      const text = payload(i);
      const third = Math.ceil(text.length / 3);
      for (let part = 1; part <= 3; part++)
        written.push({ seq: i, part: `${part}/3`, payload: text.slice((part - 1) * third, part * third) });
    } else if (i === 7) continue;
    else {
      written.push({ seq: i, payload: payload(i) });
      if (i === 8) written.push({ seq: 7, payload: payload(7) });
    }
  }
  return written;
}

describe('fromJetStream with a flow', () => {
  const { prefix, layout, connection } = suiteStreams('flow');
  let nc: NatsConnection;
  beforeAll(() => {
    nc = connection();
  });
  const consumers = async () => (await jetstreamManager(nc)).consumers.list(layout.eventsStream).next();

  it('pulls nothing while paused, and once resumed gives every event once, in order, its consumer made again if gone', async () => {
    await writeByHand(nc, layout, 'paced-1', messages(), EVENTS);
    const flow = new FlowControl();
    const retries: BrokerError[] = [];
    const seen: EvoEvent[] = [];
    const all = lastValueFrom(
      fromJetStream(nc, 'paced-1', {
        prefix,
        flow,
        idleHeartbeatMs: 500,
        onRetrying: (error) => retries.push(error),
      }).pipe(
        tap((event) => {
          seen.push(event);
          if (seen.length === 10) flow.pause();
        }),
        toArray(),
      ),
    );
    // Paused after ten events: the pull asked for before is taken whole, and no other is asked for.
    const stopped = async () => {
      const [consumer] = await consumers();
      return consumer && consumer.delivered.consumer_seq > 0 && consumer.num_waiting === 0 ? consumer : undefined;
    };
    await expect.poll(stopped, { timeout: 10_000 }).toBeDefined();
    const consumer = (await stopped())!;
    expect(consumer.delivered.consumer_seq).toBe(PACED_PULL_MESSAGES);
    expect(consumer.num_pending).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(PACED_PULL_MESSAGES);
    // Gone while its reader was paused, as the broker removes an ordered consumer idle past its threshold.
    await (await jetstreamManager(nc)).consumers.delete(layout.eventsStream, consumer.name);
    flow.resume();
    const contents = (await all).map((event) => (event as { content: string }).content);
    expect(contents).toEqual(Array.from({ length: EVENTS }, (_, i) => `e${i + 1}`));
    // Made again from the message after the last one taken, once the reader saw it deliver nothing.
    expect(retries[0]?.message).toContain(`again from stream sequence ${PACED_PULL_MESSAGES + 1}`);
    await expect.poll(async () => (await consumers()).length, { timeout: 10_000 }).toBe(0);
  });
});
