import type { NatsConnection, Status } from '@nats-io/transport-node';
import { DeliverPolicy, type ConsumerMessages, type JsMsg, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { BrokerError } from '../wire/errors.js';
import { clientsOf, serverOf } from '../wire/clients.js';
import { doubling, pause } from '../wire/backoff.js';

/** Where reading starts: the stream's first matching message, a stream sequence, or only what comes next. */
export type FollowStart =
  { readonly from: 'start' } | { readonly from: 'new' } | { readonly from: 'sequence'; readonly sequence: number };

function orderedConfig(filter: string, start: FollowStart): Partial<OrderedConsumerOptions> {
  const config: Partial<OrderedConsumerOptions> = { filter_subjects: filter };
  if (start.from === 'sequence') {
    config.deliver_policy = DeliverPolicy.StartSequence;
    config.opt_start_seq = start.sequence;
  } else config.deliver_policy = start.from === 'new' ? DeliverPolicy.New : DeliverPolicy.All;
  return config;
}

/** One server-side consumer being read, and how to retire it. */
interface Reading {
  readonly messages: ConsumerMessages;
  remove(): void;
}

/**
 * Reads `filter` in `stream` with an ordered consumer (ephemeral, no acks;
 * the client recreates it after a gap), handing each message to `onMessage`
 * synchronously. After a reconnection the consumer is made anew from the
 * message after the last one read: a restarted server has forgotten it, and
 * the client would only notice after missing heartbeats for tens of seconds.
 * `onEnd` is called once if reading stops other than by `stop()`: the
 * connection closed. `stop()` closes the consumer and deletes it from the server.
 */
export class OrderedReader {
  private stopped = false;
  private lastSequence: number | undefined;
  /** Bumped for each consumer opened: messages and endings of a retired one are ignored. */
  private generation = 0;
  private current: Reading | undefined;
  private readonly status: AsyncIterable<Status> & { stop?: () => void };

  /** Starts reading; fails with a `BrokerError` if the first consumer cannot be made. */
  static async start(
    nc: NatsConnection,
    stream: string,
    filter: string,
    start: FollowStart,
    onMessage: (message: JsMsg) => void,
    onEnd: (error: BrokerError) => void,
  ): Promise<OrderedReader> {
    const follower = new OrderedReader(nc, stream, filter, start, onMessage, onEnd);
    try {
      await follower.open(start);
    } catch (err) {
      follower.stop();
      throw new BrokerError(
        `could not read ${filter} from stream ${stream} on ${serverOf(nc)}: ${(err as Error).message} (has ensureStreams run?)`,
        { cause: err },
      );
    }
    void follower.followReconnects().catch(() => undefined);
    return follower;
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly filter: string,
    private readonly start: FollowStart,
    private readonly onMessage: (message: JsMsg) => void,
    private readonly onEnd: (error: BrokerError) => void,
  ) {
    this.status = nc.status();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.status.stop?.();
    this.current?.remove();
  }

  private async open(from: FollowStart): Promise<void> {
    const { nc } = this;
    const consumer = await clientsOf(nc).js.consumers.get(this.stream, orderedConfig(this.filter, from));
    const mine = ++this.generation;
    const messages = await consumer.consume({
      // Larger pulls than the client's 100: a live run arrives in bursts, and each pull is a round trip.
      max_messages: 1000,
      callback: (message) => {
        if (this.stopped || mine !== this.generation) return;
        this.lastSequence = message.seq;
        this.onMessage(message);
      },
    });
    this.current = {
      messages,
      remove: () => {
        void messages.close().catch(() => undefined);
        // An ordered consumer is otherwise only cleaned up by its inactivity threshold.
        if (!nc.isClosed()) void consumer.delete().catch(() => undefined);
      },
    };
    const current = () => !this.stopped && mine === this.generation;
    void messages.closed().then(
      (err) => {
        if (!current()) return;
        this.end(`the connection to ${serverOf(nc)} closed${err instanceof Error ? `: ${err.message}` : ''}`, err);
      },
      (err: unknown) => {
        if (current()) this.end(`${(err as Error)?.message} on ${serverOf(nc)}`, err);
      },
    );
  }

  private end(why: string, cause: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.onEnd(new BrokerError(`stopped reading ${this.filter}: ${why}`, { cause }));
  }

  private async followReconnects(): Promise<void> {
    for await (const event of this.status) {
      if (this.stopped) break;
      if (event.type === 'reconnect') await this.reopen();
    }
  }

  /** After a reconnection: a new consumer from the message after the last one read. */
  private async reopen(): Promise<void> {
    // Retire the old consumer first, so that its closing is not taken for the connection's.
    this.generation++;
    this.current?.remove();
    const from: FollowStart =
      this.lastSequence === undefined ? this.start : { from: 'sequence', sequence: this.lastSequence + 1 };
    // JetStream may still be recovering its streams: try until it answers, or the connection closes.
    for (const delay of doubling(100, 2000)) {
      if (this.stopped) return;
      try {
        return await this.open(from);
      } catch (err) {
        if (this.nc.isClosed()) return this.end(`the connection to ${serverOf(this.nc)} closed`, err);
        await pause(delay);
      }
    }
  }
}
