// The test cluster itself: three servers that replicate a stream, elect a new
// leader when the leader is cut off from the other two, and catch up once healed.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsCluster } from './natsCluster.js';

/** Asks until `ask` answers something `done` takes, within `withinMs`: a sign awaited, not a time raced. */
async function until<T>(ask: () => Promise<T>, done: (value: T) => boolean, withinMs = 30_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await ask();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a three-server test cluster', () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  const stream = `cluster-smoke-${process.pid}`;

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    nc = await cluster.connect();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], num_replicas: 3 });
  });

  afterAll(async () => {
    await nc?.close();
    await cluster?.dispose();
  });

  it('replicates a stream on three servers, and elects another leader when the leader is isolated', async () => {
    const js = jetstream(nc);
    for (let i = 0; i < 5; i++) await js.publish(`${stream}.a`, `m${i}`);
    const leader = await until(
      () => cluster.leaderOf(stream),
      (name) => name !== undefined,
    );
    expect(cluster.nodes.map((n) => n.name)).toContain(leader);
    const isolated = cluster.indexOf(leader!);
    const other = cluster.nodes.find((_, i) => i !== isolated)!;
    cluster.isolate(isolated);
    const next = await until(
      () => cluster.leaderOf(stream, other.url),
      (name) => name !== undefined && name !== leader,
    );
    expect(next).not.toBe(leader);
    expect(next).toBeDefined();
    cluster.heal(isolated);
    // Healed, the isolated server follows again and holds every message.
    const held = await until(
      async () => {
        const c = await cluster.connect(cluster.nodes[isolated]!.url);
        try {
          const info = await (await jetstreamManager(c)).streams.info(stream);
          return info.cluster?.replicas?.every((r) => r.current) === true ? info.state.messages : -1;
        } catch {
          return -1;
        } finally {
          await c.close();
        }
      },
      (messages) => messages === 5,
    );
    expect(held).toBe(5);
  });
});
