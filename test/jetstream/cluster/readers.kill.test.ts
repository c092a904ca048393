// Readers of live runs on a three-server cluster when the events stream's
// leader is killed (SIGKILL) and stays down: a reader (`fromJetStream`,
// `watchRuns`, a hub's `follow`) whose consumer was on that server must
// notice (its heartbeats stop) and make it again elsewhere, not wait for ever
// with its own connection up.
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../../src/events/codecs.js';
import { ensureStreams, jetStreamRunHub } from '../../../src/jetstream/index.js';
import { NatsCluster } from '../../support/natsCluster.js';
import { uniquePrefix } from '../support.js';
import {
  describeReader,
  finishedOf,
  paced,
  ReaderLog,
  runReader,
  settled,
  spread,
  statusReader,
  until,
  writeRun,
} from './readersSupport.js';

const RUNS = 8;
const EVENTS = 60;
/**
 * How long after the kill every reader must have ended: the runs' last
 * events (some 9 s of writing, held up by the election), two missed
 * heartbeats (10 s) and a new consumer; the readers as they were never end.
 */
const BOUND_MS = 45_000;
/** How long a reader with no connection tries, here. */
const STRANDED_MS = 15_000;

describe('readers of a cluster whose stream leader is killed', () => {
  let cluster: NatsCluster;
  const connections: NatsConnection[] = [];
  const prefix = uniquePrefix('kill');
  let stream: string;

  const connect = async (servers: string | string[], noRandomize = false) => {
    const nc = await cluster.connect(servers, { noRandomize });
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    stream = (await ensureStreams(await connect(cluster.urls), { prefix, replicas: 3 })).eventsStream;
  }, 90_000);

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await cluster?.dispose();
  });

  it('ends every live reader and watchRuns within seconds, none waiting for ever', async () => {
    const leaderName = await until(() => cluster.leaderOf(stream));
    const leader = cluster.indexOf(leaderName);
    const others = cluster.urls.filter((_, i) => i !== leader);
    // The writer and most readers on the servers that stay: what they read is not gone with the one killed.
    const writer = await connect(others);
    const onOthers = await Promise.all(others.map((url) => connect(url)));
    // Clients on the leader, that know the others: they reconnect there.
    const onLeader = await connect([cluster.urls[leader]!, ...others], true);
    // And one that knows only the leader: its reader has no connection once it is killed.
    const stranded = runReader(await connect(cluster.urls[leader]!), prefix, 'k1', { giveUpAfterMs: STRANDED_MS });
    const ids = Array.from({ length: RUNS }, (_, i) => `k${i}`);
    const stored = new Map<string, number>();
    const written = ids.map((id) => writeRun(writer, prefix, id, paced(EVENTS, 150)).then((at) => stored.set(id, at)));
    const readers: ReaderLog<EvoEvent>[] = ids.map((id, i) =>
      runReader(i % 4 === 0 ? onLeader : onOthers[i % 2]!, prefix, id),
    );
    const watcher = statusReader(onOthers[0]!, prefix);
    await Promise.all(readers.map((r) => r.until((events) => events.length >= 5)));
    // A hub's followers (of runs it knows by now) read through fromJetStream too.
    const hub = jetStreamRunHub(onOthers[1]!, { prefix });
    const followers = ['k1', 'k5'].map((id) => new ReaderLog(id, () => hub.follow(id)));
    await Promise.all(followers.map((r) => r.until((events) => events.length >= 1)));
    // JetStream puts each reader's consumer on a server at random: more readers until some are on the leader.
    for (let extra = 0; extra < 24; extra++) {
      const places = await cluster.consumerPlaces(stream, others[0]!);
      if (places.filter((p) => p === leaderName).length >= 3) break;
      const reader = runReader(onOthers[extra % 2]!, prefix, ids[extra % RUNS]!);
      readers.push(reader);
      await reader.until((events) => events.length >= 1);
    }
    await cluster.nodes[leader]!.stop('SIGKILL');
    const killedAt = Date.now();
    let watchedAt = NaN;
    const watched = watcher.until((records) => finishedOf(records, ids).length === RUNS).then((at) => (watchedAt = at));
    await settled([...[...readers, ...followers].map((r) => r.ended), watched, stranded.ended, ...written], BOUND_MS);
    watcher.stop();
    const lag = readers.map((r) => (r.endedAt ?? NaN) - (stored.get(r.runId!) ?? NaN));
    console.log(
      `leader ${leaderName} killed: ${readers.length} readers ended ${spread(readers.map((r) => (r.endedAt ?? NaN) - killedAt))}` +
        ` after the kill, ${spread(lag)} after their run's end was stored;` +
        ` ${readers.filter((r) => r.retries.length > 0).length} reported retrying;` +
        ` the hub's followers ended ${spread(followers.map((r) => (r.endedAt ?? NaN) - killedAt))} after it;` +
        ` watchRuns had every end ${(watchedAt - killedAt) / 1000} s after the kill;` +
        ` a reader without a connection errored ${((stranded.endedAt ?? NaN) - killedAt) / 1000} s after the kill`,
    );
    const all = [...readers, ...followers];
    const open = all.filter((r) => r.endedAt === undefined).map(describeReader);
    expect(open, 'readers still waiting, in silence').toEqual([]);
    expect(all.filter((r) => r.error || r.items.length !== EVENTS).map(describeReader)).toEqual([]);
    expect(finishedOf(watcher.items, ids)).toEqual(ids);
    // Its connection never came back: it said so, then gave up, clearly.
    expect(stranded.retries[0]).toMatch(/^lost the connection to .*; reading again once it is back$/);
    expect(stranded.error?.message).toMatch(/^stopped reading t-kill-\w+\.run\.k1\.>: no connection for 15000 ms$/);
  }, 120_000);
});
