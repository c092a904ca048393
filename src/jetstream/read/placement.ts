// Where a reader's consumer lives. In a cluster JetStream puts an ordered
// consumer (one replica) on any server that holds the stream, the leader or a
// follower, and it reads that server's copy: one that is behind, or that skipped
// messages it was sent while it caught up, gives a reader less than the stream
// holds. A server that is down is among them: its consumer is never made.
import type { NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  type Consumer,
  type JetStreamClient,
  type MsgRequest,
  type OrderedConsumerOptions,
  type StreamInfo,
} from '@nats-io/jetstream';
import { clientsOf } from '../wire/clients.js';
import { DEFAULTS } from '../wire/defaults.js';

/** Tries at placing a consumer away from the servers to avoid, before taking where it lands. */
const PLACEMENT_TRIES = 6;

const readerClients = new WeakMap<NatsConnection, JetStreamClient>();

/** The JetStream client readers make their consumers with: it waits `consumerCreateTimeoutMs` for each. */
function readerClient(nc: NatsConnection): JetStreamClient {
  let js = readerClients.get(nc);
  if (!js) readerClients.set(nc, (js = jetstream(nc, { timeout: DEFAULTS.consumerCreateTimeoutMs })));
  return js;
}

/** A consumer made, and the server it is on (`undefined` where the answer does not say). */
export interface Placed {
  readonly consumer: Consumer;
  readonly server: string | undefined;
}

/** The stream's state, and the servers that can serve it now: its leader and the followers that are current. */
export async function servingReplicas(
  nc: NatsConnection,
  stream: string,
): Promise<{ readonly info: StreamInfo; readonly servers: readonly string[] }> {
  const info = await (await clientsOf(nc).manager()).streams.info(stream);
  const leader = info.cluster?.leader;
  const followers = (info.cluster?.replicas ?? []).filter((r) => r.current && !r.offline).map((r) => r.name);
  return { info, servers: leader ? [leader, ...followers] : followers };
}

/**
 * An ordered consumer of `stream`, on a server not in `avoid` if the stream
 * has one that serves it and a few tries get there (a new consumer lands on
 * a replica at random); else where the last try landed.
 */
export async function placeOrdered(
  nc: NatsConnection,
  stream: string,
  config: Partial<OrderedConsumerOptions>,
  avoid: ReadonlySet<string>,
): Promise<Placed> {
  // Nowhere else to go (one replica, or the others behind): wherever it lands.
  if (avoid.size > 0 && !(await servingReplicas(nc, stream)).servers.some((s) => !avoid.has(s))) avoid = new Set();
  for (let tries = 1; ; tries++) {
    const consumer = await readerClient(nc).consumers.get(stream, { ...config });
    const server = await serverOfConsumer(consumer);
    if (server === undefined || !avoid.has(server) || tries >= PLACEMENT_TRIES) return { consumer, server };
    void consumer.delete().catch(() => undefined);
  }
}

/** The server a consumer is on now, as the client last heard (it makes an ordered consumer again by itself). */
export async function serverOfConsumer(consumer: Consumer): Promise<string | undefined> {
  // `info(true)` answers from what the client holds, without a request.
  return (await consumer.info(true)).cluster?.leader || undefined;
}

/** The stream sequence of the first message on `filter` at or after `from` that the stream's leader holds. */
export async function leaderHolds(
  nc: NatsConnection,
  stream: string,
  filter: string,
  from: number,
): Promise<number | undefined> {
  const jsm = await clientsOf(nc).manager();
  // The leader answers a message get; the server takes `next_by_subj` (since 2.9), which the client's type does not name.
  const stored = await jsm.streams.getMessage(stream, { seq: from, next_by_subj: filter } as unknown as MsgRequest);
  return stored?.seq;
}
