/**
 * JetStream on a three-server cluster on loopback (`test/support/natsCluster.ts`,
 * nats-server on this machine, file storage):
 *
 *   throughput  one run of `--events` events written by `publishTo` as fast
 *               as the stream takes them, into an R1 stream and an R3 stream
 *               of the same cluster, after a round of each not counted,
 *               rounds interleaved, medians compared;
 *   leader move runs written at a pace (4 runs, an event every 40 ms each)
 *               by a writer on the leader, whose publishes on their way are
 *               lost as the leadership moves (its link is held, the leader
 *               steps down, the link breaks: what a rolling restart does to a
 *               writer): the longest time from an event's writing to its
 *               storage (the stream's timestamp), with the re-send of a
 *               publish after `resendAfterMs` (1 s) and on a later ack (now),
 *               and with `resendAfterMs: Infinity` (before: a lost publish
 *               waits out its 5 s ack timeout).
 *
 * ```bash
 * npx tsx test/bench/cluster.bench.ts              # 20,000 events, 3 rounds; 3 moves each way
 * npx tsx test/bench/cluster.bench.ts --smoke      # 2,000 events, 1 round; 1 move each way
 * ```
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { NatsConnection } from '@nats-io/transport-node';
import { from, lastValueFrom } from 'rxjs';
import type { EvoEvent } from '../../src/events/codecs.js';
import { ensureStreams, publishTo, type JetStreamLayout } from '../../src/jetstream/index.js';
import { NatsCluster } from '../support/natsCluster.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { uniquePrefix } from '../jetstream/support.js';
import { until } from '../jetstream/cluster/readersSupport.js';
import { longest, stepDown, storeDelays, timed } from '../jetstream/cluster/writesSupport.js';
import { median, table } from './report.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string' },
    rounds: { type: 'string' },
    moves: { type: 'string' },
    smoke: { type: 'boolean', default: false },
  },
});
const count = Number(flags.events ?? (flags.smoke ? 2000 : 20_000));
const rounds = Number(flags.rounds ?? (flags.smoke ? 1 : 3));
const moves = Number(flags.moves ?? (flags.smoke ? 1 : 3));
const MOVE_RUNS = 4;
const MOVE_EVENTS = 60;

const cluster = await NatsCluster.start();
const connections: NatsConnection[] = [];
const connect = async (servers: string | string[]) => {
  const nc = await cluster.connect(servers);
  connections.push(nc);
  return nc;
};

/** Events/s of one run of `count` events written into `layout`'s stream. */
async function throughput(nc: NatsConnection, layout: JetStreamLayout, runId: string): Promise<number> {
  const events: EvoEvent[] = Array.from({ length: count }, (_, i) => ({
    type: 'text',
    content: `event ${i + 1} `.padEnd(120, '.'),
  }));
  const start = performance.now();
  await lastValueFrom(from(events).pipe(publishTo(nc, runId, { prefix: layout.prefix })));
  return count / ((performance.now() - start) / 1000);
}

/** The longest store of an event of runs written through a leader move that loses publishes on their way. */
async function moveGap(layout: JetStreamLayout, name: string, resendAfterMs: number | undefined): Promise<number> {
  const leaderName = await until(() => cluster.leaderOf(layout.eventsStream));
  const leader = cluster.indexOf(leaderName);
  const link = await TcpProxy.start(cluster.urls[leader]!);
  const writer = await connect(link.url);
  const other = await connect(cluster.urls[(leader + 1) % 3]!);
  const ids = Array.from({ length: MOVE_RUNS }, (_, i) => `${name}${i}`);
  const options = { prefix: layout.prefix, retryForMs: 90_000, ...(resendAfterMs ? { resendAfterMs } : {}) };
  const written = Promise.all(
    ids.map((id) => lastValueFrom(timed(MOVE_EVENTS, 40).pipe(publishTo(writer, id, options)))),
  );
  await until(async () => (writer.stats().outMsgs >= 10 * MOVE_RUNS ? true : undefined));
  const sent = writer.stats().outMsgs;
  link.stall('toServer');
  await until(async () => (writer.stats().outMsgs >= sent + 5 ? true : undefined));
  await stepDown(other, layout.eventsStream);
  await until(async () => {
    const now = await cluster.leaderOf(layout.eventsStream);
    return now && now !== leaderName ? now : undefined;
  });
  link.cut();
  link.resume();
  await written;
  const { max } = longest((await storeDelays(other, layout, ids)).values(), 0);
  await writer.close();
  await link.close();
  return max;
}

try {
  const nc = await connect(cluster.urls);
  const streams = { R1: 1, R3: 3 } as const;
  const layouts = {
    R1: await ensureStreams(nc, { prefix: uniquePrefix('bench-r1'), replicas: streams.R1 }),
    R3: await ensureStreams(nc, { prefix: uniquePrefix('bench-r3'), replicas: streams.R3 }),
  };
  // A round of each first, not counted: the code warm, the streams' files made.
  for (const kind of ['R1', 'R3'] as const) await throughput(nc, layouts[kind], 'warm');
  const rates: Record<keyof typeof streams, number[]> = { R1: [], R3: [] };
  for (let round = 0; round < rounds; round++)
    for (const kind of ['R1', 'R3'] as const) rates[kind].push(await throughput(nc, layouts[kind], `t${round}`));
  const rate = (kind: keyof typeof streams) => median(rates[kind]);
  console.log(`publish throughput, one run of ${count.toLocaleString('en-US')} events, median of ${rounds} rounds:`);
  console.log(
    table(
      ['stream', 'events/s'],
      (['R1', 'R3'] as const).map((kind) => [`(${kind})`, Math.round(rate(kind)).toLocaleString('en-US')]),
    ),
  );
  console.log(`ratio (R3 / R1): ${(rate('R3') / rate('R1')).toFixed(2)}×`);

  const gaps = { now: [] as number[], before: [] as number[] };
  for (let move = 0; move < moves; move++) {
    gaps.now.push(await moveGap(layouts.R3, `n${move}-`, undefined));
    gaps.before.push(await moveGap(layouts.R3, `b${move}-`, Infinity));
  }
  const ms = (v: number) => `${Math.round(v)} ms`;
  console.log(`longest store of an event at a leader move that loses publishes (R3), ${moves} moves each:`);
  console.log(
    table(
      ['publish', 'median', 'max'],
      [
        ['(now) re-sent after 1 s, or on a later ack', ms(median(gaps.now)), ms(Math.max(...gaps.now))],
        ['(before) waits out its 5 s ack timeout', ms(median(gaps.before)), ms(Math.max(...gaps.before))],
      ],
    ),
  );
  console.log(`ratio (before / now): ${(median(gaps.before) / median(gaps.now)).toFixed(1)}×`);
} finally {
  for (const nc of connections) await nc.close().catch(() => undefined);
  await cluster.dispose();
}
