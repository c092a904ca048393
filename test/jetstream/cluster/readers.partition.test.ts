// Readers on a three-server cluster when a server is cut off from the other
// two (every route closed, its clients still connected to it) and heals:
// readers whose client stays on it say they retry and recover after the
// heal; runs read anew right after the heal come whole, although a consumer
// may land on the healed server's copy, which can be behind or have skipped
// what it was sent while it caught up; and a lookup that gets no answer says
// so, not that the stream may be missing.
import type { NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../../src/events/codecs.js';
import { ensureStreams, fromJetStream, layoutOf, type JetStreamLayout } from '../../../src/jetstream/index.js';
import { workersConsumer } from '../../../src/jetstream/worker/workersConsumer.js';
import { NatsCluster } from '../../support/natsCluster.js';
import { uniquePrefix } from '../support.js';
import {
  describeReader,
  finishedOf,
  paced,
  runReader,
  settled,
  spread,
  statusReader,
  until,
  writeRun,
  type ReaderLog,
} from './readersSupport.js';

const RUNS = 9;
const EVENTS = 60;
/** How long the server is cut off: as long as the outages measured in the field. */
const PARTITION_MS = 15_000;
/**
 * How long after the heal every reader must have ended: the runs' rest (held
 * up by the partition), the healed copy caught up or read elsewhere; the
 * readers as they were stall for longer, or never end.
 */
const BOUND_MS = 60_000;

describe('readers of a cluster whose stream leader is cut off, then heals', () => {
  let cluster: NatsCluster;
  const connections: NatsConnection[] = [];
  const prefix = uniquePrefix('part');
  let layout: JetStreamLayout;

  const connect = async (servers: string | string[]) => {
    const nc = await cluster.connect(servers);
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    layout = await ensureStreams(await connect(cluster.urls), { prefix, replicas: 3 });
  }, 90_000);

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await cluster?.dispose();
  });

  it('readers on it report retrying and recover after the heal; runs read anew then come whole', async () => {
    const leaderName = await until(() => cluster.leaderOf(layout.eventsStream));
    const cut = cluster.indexOf(leaderName);
    // A writer and two readers in three on each server, the one cut off included: they stay on it.
    const on = await Promise.all(cluster.urls.map((url) => connect(url)));
    const ids = Array.from({ length: RUNS }, (_, i) => `p${i}`);
    const written = ids.map((id, i) => writeRun(on[i % 3]!, prefix, id, paced(EVENTS, 150)));
    const readers: ReaderLog<EvoEvent>[] = ids.map((id, i) =>
      runReader(i % 3 === 2 ? on[i % 3]! : on[cut]!, prefix, id),
    );
    const watcher = statusReader(on[cut]!, prefix);
    await Promise.all(readers.map((r) => r.until((events) => events.length >= 5)));
    cluster.isolate(cut);
    const cutAt = Date.now();
    // Once the server knows itself cut off, a reader that starts there cannot reach the stream's leader.
    await until(async () => ((await cluster.leaderOf(layout.eventsStream, cluster.urls[cut])) ? undefined : true));
    const late = runReader(on[cut]!, prefix, ids[0]!);
    await new Promise((r) => setTimeout(r, cutAt + PARTITION_MS - Date.now()));
    cluster.heal(cut);
    const healedAt = Date.now();
    // Read anew at once through each server, while the healed one catches up.
    const fresh = on.flatMap((nc) => ids.map((id) => runReader(nc, prefix, id)));
    let watchedAt = NaN;
    const watched = watcher.until((records) => finishedOf(records, ids).length === RUNS).then((at) => (watchedAt = at));
    await settled([...[...readers, late, ...fresh].map((r) => r.ended), watched, ...written], BOUND_MS);
    watcher.stop();
    console.log(
      `${leaderName} cut off for ${PARTITION_MS / 1000} s: live readers ended ${spread(readers.map((r) => (r.endedAt ?? NaN) - healedAt))} after the heal,` +
        ` ${readers.filter((r) => r.retries.length > 0).length} of ${readers.length} having reported retrying;` +
        ` ${fresh.length} fresh reads ended ${spread(fresh.map((r) => (r.endedAt ?? NaN) - healedAt))} after it;` +
        ` watchRuns had every end ${(watchedAt - healedAt) / 1000} s after it;` +
        ` a reader started while it was cut off reported retrying ${late.retries.length} times and ended ${((late.endedAt ?? NaN) - healedAt) / 1000} s after it`,
    );
    const open = [...readers, late, ...fresh].filter((r) => r.endedAt === undefined).map(describeReader);
    expect(open, 'readers still waiting').toEqual([]);
    const broken = [...readers, late, ...fresh].filter((r) => r.error || r.items.length !== EVENTS).map(describeReader);
    expect(broken, 'readers that did not get their run whole').toEqual([]);
    expect(finishedOf(watcher.items, ids)).toEqual(ids);
    // The reader that started there while it was cut off said that it was trying again, then got its run.
    expect(late.retries.length).toBeGreaterThan(0);
    expect(late.retries[0]).toMatch(/^could not read (the status of run p0|\S+\.run\.p0\.>) .*(timed out|no leader)/);
  }, 150_000);

  it('says a lookup got no answer, and asks whether ensureStreams ran only of a stream that is not there', async () => {
    const leaderName = await until(() => cluster.leaderOf(layout.eventsStream));
    const cut = (cluster.indexOf(leaderName) + 1) % 3;
    const onCut = await connect(cluster.urls[cut]!);
    const elsewhere = await connect(cluster.urls[(cut + 1) % 3]!);
    cluster.isolate(cut);
    try {
      // A sign that it knows itself cut off: no leader of the stream is known there any more.
      await until(async () => ((await cluster.leaderOf(layout.eventsStream, cluster.urls[cut])) ? undefined : true));
      const unanswered = [
        await lastValueFrom(fromJetStream(onCut, 'nobody', { prefix, giveUpAfterMs: 0 })).catch((e: Error) => e),
        await workersConsumer(onCut, layout, 10_000, 0).catch((e: Error) => e),
      ].map(String);
      for (const message of unanswered) {
        expect(message).toMatch(
          /(timed out: no answer in time|: no leader) \(a leader being elected, or a server away\)/,
        );
        expect(message).not.toMatch(/ensureStreams/);
      }
    } finally {
      cluster.heal(cut);
    }
    const missing = layoutOf({ prefix: uniquePrefix('none') });
    const absent = [
      await lastValueFrom(fromJetStream(elsewhere, 'nobody', { prefix: missing.prefix })).catch((e: Error) => e),
      await workersConsumer(elsewhere, missing, 10_000).catch((e: Error) => e),
    ].map(String);
    for (const message of absent) expect(message).toMatch(/stream not found \(has ensureStreams run\?\)/);
  }, 60_000);
});
