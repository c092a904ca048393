// Runs written on a three-server cluster through a move of the events
// stream's leader (a stepdown) while publishes on their way to it are lost
// (their connection breaks, as a rolling restart breaks them), and through a
// kill of its leader and its restart. A publish in flight when the leader
// goes is lost with it and has no answer: it is sent again within a second (or
// at once when a later one of its run is stored), so the write gap a move
// costs is about an election, not the 5 s of an ack timeout. Every run is
// stored whole, and read whole and in order through each server, although a
// re-sent event is stored after later ones.
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../../src/events/codecs.js';
import { ensureStreams, type JetStreamLayout } from '../../../src/jetstream/index.js';
import { NatsCluster } from '../../support/natsCluster.js';
import { TcpProxy } from '../../support/tcpProxy.js';
import { uniquePrefix } from '../support.js';
import { describeReader, runReader, settled, until, writeRun, type ReaderLog } from './readersSupport.js';
import { longest, numberOf, stepDown, storeDelays, timed } from './writesSupport.js';

const RUNS = 6;
const EVENTS = 80;
/** The longest an event may take to be stored at a move: an election and a re-send, with seconds of margin; 5 s ack timeouts pass it. */
const GAP_BOUND_MS = 3000;
/** How long every reader has after its run is written. */
const READ_BOUND_MS = 30_000;

describe('runs written through a leader change on a cluster', () => {
  let cluster: NatsCluster;
  const connections: NatsConnection[] = [];
  const proxies: TcpProxy[] = [];
  let layout: JetStreamLayout;

  const connect = async (servers: string | string[]) => {
    const nc = await cluster.connect(servers);
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    layout = await ensureStreams(await connect(cluster.urls), { prefix: uniquePrefix('writes'), replicas: 3 });
  }, 90_000);

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    for (const proxy of proxies) await proxy.close();
    await cluster?.dispose();
  });

  /** `RUNS` runs written from `writer`, and a reader of each through every server; resolves once the writes started. */
  async function runs(name: string, writer: NatsConnection, readOn: readonly NatsConnection[]) {
    const ids = Array.from({ length: RUNS }, (_, i) => `${name}${i}`);
    const written = Promise.all(ids.map((id) => writeRun(writer, layout.prefix, id, timed(EVENTS, 40))));
    const readers = readOn.flatMap((nc) => ids.map((id) => runReader(nc, layout.prefix, id)));
    await Promise.all(readers.map((r) => r.until((events) => events.length >= 10)));
    return { ids, written, readers };
  }

  /** Every reader got its run whole and in order; the longest store delay of the runs. */
  async function check(ids: readonly string[], written: Promise<unknown>, readers: readonly ReaderLog<EvoEvent>[]) {
    await written;
    await settled(
      readers.map((r) => r.ended),
      READ_BOUND_MS,
    );
    const wrong = readers.filter(
      (r) => r.error || r.endedAt === undefined || r.items.map(numberOf).some((n, i) => n !== i + 1),
    );
    expect(wrong.map(describeReader), 'readers that did not get their run whole and in order').toEqual([]);
    expect(readers.every((r) => r.items.length === EVENTS)).toBe(true);
    const delays = await storeDelays(connections[0]!, layout, ids);
    expect([...delays.values()].map((d) => d.length)).toEqual(ids.map(() => EVENTS));
    return longest(delays.values(), GAP_BOUND_MS);
  }

  it('stores every event within seconds of a leader move that loses publishes on their way', async () => {
    const leaderName = await until(() => cluster.leaderOf(layout.eventsStream));
    const leader = cluster.indexOf(leaderName);
    // The writer on the leader, through a link of the test's.
    const link = await TcpProxy.start(cluster.urls[leader]!);
    proxies.push(link);
    const writer = await connect(link.url);
    const on = await Promise.all(cluster.urls.map((url) => connect(url)));
    const { ids, written, readers } = await runs('m', writer, on);
    // Publishes on their way as the leadership moves, then lost with their connection: they have no answer.
    const sent = writer.stats().outMsgs;
    link.stall('toServer');
    await until(async () => (writer.stats().outMsgs >= sent + 5 ? true : undefined));
    await stepDown(on[(leader + 1) % 3]!, layout.eventsStream);
    const after = await until(async () => {
      const now = await cluster.leaderOf(layout.eventsStream);
      return now && now !== leaderName ? now : undefined;
    });
    link.cut();
    link.resume();
    const { max, over } = await check(ids, written, readers);
    console.log(`leader moved ${leaderName} → ${after}: the longest store of an event took ${Math.round(max)} ms`);
    expect(over, `events stored more than ${GAP_BOUND_MS} ms after their writing (longest ${Math.round(max)} ms)`).toBe(
      0,
    );
  }, 120_000);

  it('stores every run whole through a kill of the leader and its restart', async () => {
    const leaderName = await until(() => cluster.leaderOf(layout.eventsStream));
    const leader = cluster.indexOf(leaderName);
    const others = cluster.urls.filter((_, i) => i !== leader);
    const writer = await connect(others);
    const on = await Promise.all(others.map((url) => connect(url)));
    const { ids, written, readers } = await runs('k', writer, on);
    await cluster.nodes[leader]!.stop('SIGKILL');
    await until(async () => ((await cluster.leaderOf(layout.eventsStream)) ? true : undefined));
    await cluster.restart(leader);
    const { max } = await check(ids, written, readers);
    console.log(`leader ${leaderName} killed and restarted: the longest store of an event took ${Math.round(max)} ms`);
  }, 120_000);
});
