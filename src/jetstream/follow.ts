import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, type JsMsg, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { BrokerError } from './errors.js';
import { clientsOf, serverOf } from './layout.js';

/** Where reading starts: the stream's first matching message, a stream sequence, or only what comes next. */
export type FollowStart = { readonly from: 'start' } | { readonly from: 'new' } | { readonly from: 'sequence'; readonly sequence: number };

/** A server-side ordered consumer being read; `stop()` closes it and deletes it from the server. */
export interface Following {
  stop(): void;
}

/**
 * Reads `filter` in `stream` with an ordered consumer (ephemeral, no acks;
 * the client recreates it from the last sequence seen after a gap or a
 * reconnection), handing each message to `onMessage` synchronously. `onEnd`
 * is called once if the consumer stops other than by `stop()`: the
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
  const config: Partial<OrderedConsumerOptions> = { filter_subjects: filter };
  if (start.from === 'sequence') {
    config.deliver_policy = DeliverPolicy.StartSequence;
    config.opt_start_seq = start.sequence;
  } else config.deliver_policy = start.from === 'new' ? DeliverPolicy.New : DeliverPolicy.All;
  let consumer;
  try {
    consumer = await js.consumers.get(stream, config);
  } catch (err) {
    throw new BrokerError(`could not read ${filter} from stream ${stream} on ${serverOf(nc)}: ${(err as Error).message} (has ensureStreams run?)`, {
      cause: err,
    });
  }
  let stopped = false;
  const messages = await consumer.consume({
    callback: (message) => {
      if (!stopped) onMessage(message);
    },
  });
  void messages.closed().then(
    (err) => {
      if (stopped) return;
      stopped = true;
      const why = err instanceof Error ? `: ${err.message}` : '';
      onEnd(new BrokerError(`stopped reading ${filter}: the connection to ${serverOf(nc)} closed${why}`, { cause: err }));
    },
    (err: unknown) => {
      if (stopped) return;
      stopped = true;
      onEnd(new BrokerError(`stopped reading ${filter} on ${serverOf(nc)}: ${(err as Error)?.message}`, { cause: err }));
    },
  );
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      void messages.close().catch(() => undefined);
      // An ordered consumer is only cleaned up by its inactivity threshold; remove it now.
      if (!nc.isClosed()) void consumer.delete().catch(() => undefined);
    },
  };
}
