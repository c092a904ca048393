import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, type ConsumerMessages, type JsMsg, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { BrokerError } from './errors.js';
import { clientsOf, serverOf } from './layout.js';

/** Where reading starts: the stream's first matching message, a stream sequence, or only what comes next. */
export type FollowStart =
  { readonly from: 'start' } | { readonly from: 'new' } | { readonly from: 'sequence'; readonly sequence: number };

/** A server-side ordered consumer being read; `stop()` closes it and deletes it from the server. */
export interface Following {
  stop(): void;
}

function orderedConfig(filter: string, start: FollowStart): Partial<OrderedConsumerOptions> {
  const config: Partial<OrderedConsumerOptions> = { filter_subjects: filter };
  if (start.from === 'sequence') {
    config.deliver_policy = DeliverPolicy.StartSequence;
    config.opt_start_seq = start.sequence;
  } else config.deliver_policy = start.from === 'new' ? DeliverPolicy.New : DeliverPolicy.All;
  return config;
}

/**
 * Reads `filter` in `stream` with an ordered consumer (ephemeral, no acks;
 * the client recreates it after a gap), handing each message to `onMessage`
 * synchronously. After a reconnection the consumer is made anew from the
 * message after the last one read: a restarted server has forgotten it, and
 * the client would only notice after missing heartbeats for tens of seconds.
 * `onEnd` is called once if reading stops other than by `stop()`: the
 * connection closed.
 */
export async function follow(
  nc: NatsConnection,
  stream: string,
  filter: string,
  start: FollowStart,
  onMessage: (message: JsMsg) => void,
  onEnd: (error: BrokerError) => void,
): Promise<Following> {
  const { js } = clientsOf(nc);
  let stopped = false;
  let lastSequence: number | undefined;
  let generation = 0;
  let current: { messages: ConsumerMessages; remove(): void } | undefined;

  const open = async (from: FollowStart) => {
    const consumer = await js.consumers.get(stream, orderedConfig(filter, from));
    const mine = ++generation;
    const messages = await consumer.consume({
      // Larger pulls than the client's 100: a live run arrives in bursts, and each pull is a round trip.
      max_messages: 1000,
      callback: (message) => {
        if (stopped || mine !== generation) return;
        lastSequence = message.seq;
        onMessage(message);
      },
    });
    current = {
      messages,
      remove: () => {
        void messages.close().catch(() => undefined);
        // An ordered consumer is otherwise only cleaned up by its inactivity threshold.
        if (!nc.isClosed()) void consumer.delete().catch(() => undefined);
      },
    };
    void messages.closed().then(
      (err) => {
        if (stopped || mine !== generation) return;
        end(`the connection to ${serverOf(nc)} closed${err instanceof Error ? `: ${err.message}` : ''}`, err);
      },
      (err: unknown) => {
        if (stopped || mine !== generation) return;
        end(`${(err as Error)?.message} on ${serverOf(nc)}`, err);
      },
    );
  };

  const end = (why: string, cause: unknown) => {
    if (stopped) return;
    stopped = true;
    stopStatus();
    current?.remove();
    onEnd(new BrokerError(`stopped reading ${filter}: ${why}`, { cause }));
  };

  try {
    await open(start);
  } catch (err) {
    throw new BrokerError(
      `could not read ${filter} from stream ${stream} on ${serverOf(nc)}: ${(err as Error).message} (has ensureStreams run?)`,
      {
        cause: err,
      },
    );
  }

  const status = nc.status();
  const stopStatus = () => (status as { stop?: () => void }).stop?.();
  void (async () => {
    for await (const event of status) {
      if (stopped) break;
      if (event.type !== 'reconnect') continue;
      // Retire the old consumer first, so that its closing is not taken for the connection's.
      generation++;
      current?.remove();
      const from: FollowStart = lastSequence === undefined ? start : { from: 'sequence', sequence: lastSequence + 1 };
      // JetStream may still be recovering its streams: try until it answers, or the connection closes.
      for (let delay = 100; !stopped; delay = Math.min(delay * 2, 2000)) {
        try {
          await open(from);
          break;
        } catch (err) {
          if (nc.isClosed()) return end(`the connection to ${serverOf(nc)} closed`, err);
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
    }
  })().catch(() => undefined);

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      stopStatus();
      current?.remove();
    },
  };
}
