// The first try of a publish (AckCollector) against a stream's leader that
// loses publishes or answers before it has stored them, as a cluster does
// through an election. The leader here is a responder of the test's on the
// real broker, answering as JetStream does, and the collector's timers run
// on a clock the test moves: each step waits for a sign (a publish that
// reached the responder, an answer that reached the collector).
import { randomUUID } from 'node:crypto';
import { headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { PubAck } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckCollector } from '../../src/jetstream/write/acks.js';
import { ManualClock } from '../support/manualClock.js';
import { connectBroker } from './support.js';

const WAIT = { timeoutMs: 10_000, resendAfterMs: 1000 };
/** How often the collector looks at its timers with that wait: a quarter of `resendAfterMs`. */
const SWEEP_MS = 250;

/** A stream leader of the test's: every publish it got on its subject, answered only when the test says. */
class Leader {
  readonly got: Msg[] = [];
  readonly subject = `acks.${randomUUID()}`;

  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(this.subject, { callback: (_err, msg) => void this.got.push(msg) });
  }

  /** The payloads it got, in order. */
  get payloads(): string[] {
    return this.got.map((m) => m.string());
  }

  /** Answers `msg` with `answer`, as JetStream would, and waits until the broker has it. */
  async answer(msg: Msg, answer: object): Promise<void> {
    msg.respond(JSON.stringify(answer));
    await this.nc.flush();
  }
}

/** A publish of the collector, and whether it settled. */
function publish(collector: AckCollector, subject: string, payload: string) {
  const h = headers();
  h.set('Nats-Msg-Id', payload);
  const result: { ack?: PubAck; error?: Error } = {};
  const done = collector.publish(subject, new TextEncoder().encode(payload), h, WAIT).then(
    (ack) => (result.ack = ack),
    (err: Error) => (result.error = err),
  );
  return { result, done };
}

describe('AckCollector', () => {
  let writer: NatsConnection;
  let server: NatsConnection;
  let clock: ManualClock;
  let collector: AckCollector;

  beforeAll(async () => {
    server = await connectBroker();
    writer = await connectBroker();
    clock = new ManualClock();
    collector = AckCollector.of(writer, clock);
  });

  afterAll(async () => {
    await writer?.close();
    await server?.close();
  });

  /** Both connections have passed on what was sent before: the leader got the publishes, the collector the answers. */
  const settle = async () => {
    await writer.flush();
    await server.flush();
    await writer.flush();
  };

  it('takes a duplicate at sequence 0 for not stored, and sends the message again', async () => {
    const leader = new Leader(server);
    await server.flush();
    const a = publish(collector, leader.subject, 'a');
    await settle();
    await leader.answer(leader.got[0]!, { stream: 'S', duplicate: true, seq: 0 });
    await settle();
    expect(a.result).toEqual({});
    clock.advance(1000);
    await settle();
    expect(leader.payloads).toEqual(['a', 'a']);
    await leader.answer(leader.got[1]!, { stream: 'S', duplicate: true, seq: 7 });
    await a.done;
    expect(a.result.ack).toMatchObject({ seq: 7 });
  });

  it('keeps waiting through "no leader" and "in process" answers', async () => {
    const leader = new Leader(server);
    await server.flush();
    const a = publish(collector, leader.subject, 'b');
    await settle();
    await leader.answer(leader.got[0]!, { error: { code: 503, err_code: 10008, description: 'unavailable' } });
    await leader.answer(leader.got[0]!, { error: { code: 400, err_code: 10158, description: 'in process' } });
    await settle();
    expect(a.result).toEqual({});
    await leader.answer(leader.got[0]!, { stream: 'S', seq: 3 });
    await a.done;
    expect(a.result.ack).toMatchObject({ seq: 3 });
  });

  it('sends a publish again at once when a later one on its subject is stored', async () => {
    const leader = new Leader(server);
    await server.flush();
    const a = publish(collector, leader.subject, 'c1');
    const b = publish(collector, leader.subject, 'c2');
    await settle();
    // c1 was lost with the old leader; c2 reached the new one.
    await leader.answer(leader.got[1]!, { stream: 'S', seq: 10 });
    await b.done;
    await settle();
    expect(leader.payloads).toEqual(['c1', 'c2', 'c1']);
    expect(a.result).toEqual({});
    await leader.answer(leader.got[2]!, { stream: 'S', seq: 11 });
    await a.done;
    expect(a.result.ack).toMatchObject({ seq: 11 });
  });

  it('leaves a publish of one run alone when a later one of another run is stored', async () => {
    const first = new Leader(server);
    const other = new Leader(server);
    await server.flush();
    const a = publish(collector, first.subject, 'e1');
    const b = publish(collector, other.subject, 'e2');
    await settle();
    // Another run's ack says nothing of this one's leader: e1 is not sent again.
    await other.answer(other.got[0]!, { stream: 'S', seq: 30 });
    await b.done;
    await settle();
    expect(first.payloads).toEqual(['e1']);
    await first.answer(first.got[0]!, { stream: 'S', seq: 31 });
    await a.done;
    expect(a.result.ack).toMatchObject({ seq: 31 });
  });

  it('sends again once its subject had no ack for resendAfterMs, not before', async () => {
    const leader = new Leader(server);
    await server.flush();
    const a = publish(collector, leader.subject, 'd1');
    const b = publish(collector, leader.subject, 'd2');
    await settle();
    clock.advance(900);
    await settle();
    // d1 stored at 900 ms: acks flow, d2 only waits its turn on a slow link.
    await leader.answer(leader.got[0]!, { stream: 'S', seq: 20 });
    await a.done;
    clock.advance(999);
    await settle();
    expect(leader.payloads).toEqual(['d1', 'd2']);
    clock.advance(SWEEP_MS);
    await settle();
    expect(leader.payloads).toEqual(['d1', 'd2', 'd2']);
    await leader.answer(leader.got[2]!, { stream: 'S', seq: 21 });
    await b.done;
    expect(b.result.ack).toMatchObject({ seq: 21 });
  });

  it('fails a publish with no stored ack by its timeout, and ends its sends', async () => {
    const leader = new Leader(server);
    await server.flush();
    const a = publish(collector, leader.subject, 'e');
    clock.advance(WAIT.timeoutMs + SWEEP_MS);
    await a.done;
    expect(a.result.error?.message).toBe('timeout waiting for the ack');
    await settle();
    const sent = leader.got.length;
    clock.advance(5 * WAIT.resendAfterMs);
    await settle();
    expect(leader.got.length).toBe(sent);
    expect(collector.pending).toBe(0);
  });
});
