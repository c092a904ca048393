// `ensureStreams` against streams a cluster already replicates: a process
// started without `replicas` keeps each stream's copies, and an explicit
// change is made and reported, so that an operator's R3 never turns into R1
// unseen.
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureStreams, type JetStreamLayout } from '../../../src/jetstream/index.js';
import { NatsCluster } from '../../support/natsCluster.js';
import { uniquePrefix } from '../support.js';

describe('ensureStreams on a cluster', () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  const prefix = uniquePrefix('replicas');
  let layout: JetStreamLayout;

  /** The replicas each of the prefix's streams has, as the cluster reports them. */
  const replicasOf = async (): Promise<number[]> => {
    const jsm = await jetstreamManager(nc);
    const names = [layout.eventsStream, layout.requestsStream, layout.hubStream];
    return Promise.all(names.map(async (name) => (await jsm.streams.info(name)).config.num_replicas));
  };

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    nc = await cluster.connect();
    layout = await ensureStreams(nc, { prefix, replicas: 3 });
  }, 90_000);

  afterAll(async () => {
    await nc?.close();
    await cluster?.dispose();
  });

  it('keeps existing R3 streams at R3 when called without replicas, and reports no change', async () => {
    expect(await replicasOf()).toEqual([3, 3, 3]);
    const again = await ensureStreams(nc, { prefix });
    expect(await replicasOf()).toEqual([3, 3, 3]);
    expect(again.changes).toEqual([]);
  }, 60_000);

  it('reports a changed setting of an existing stream, with its value before and after', async () => {
    const hour = 60 * 60 * 1000;
    const { changes } = await ensureStreams(nc, { prefix, eventsMaxAgeMs: hour });
    expect(changes).toEqual([
      { stream: layout.eventsStream, field: 'max_age', from: 7 * 24 * hour * 1_000_000, to: hour * 1_000_000 },
    ]);
    expect(await replicasOf()).toEqual([3, 3, 3]);
  }, 60_000);

  it('lowers the replicas when asked to, and reports each stream it lowered', async () => {
    const { changes } = await ensureStreams(nc, { prefix, eventsMaxAgeMs: 60 * 60 * 1000, replicas: 1 });
    expect(changes).toEqual(
      [layout.eventsStream, layout.requestsStream, layout.hubStream].map((stream) => ({
        stream,
        field: 'num_replicas',
        from: 3,
        to: 1,
      })),
    );
    expect(await replicasOf()).toEqual([1, 1, 1]);
  }, 60_000);
});
