import type { NatsConnection, Status } from '@nats-io/transport-node';
import { DeliverPolicy, type Consumer, type JsMsg, type OrderedConsumerOptions } from '@nats-io/jetstream';
import type { FlowControl } from '../../common/FlowControl.js';
import { BrokerError } from '../wire/errors.js';
import { serverOf } from '../wire/clients.js';
import { ConsumerWatch, type Watched } from './ConsumerWatch.js';
import { pullMessages, type Pulled } from './PacedPull.js';
import { leaderHolds, placeOrdered, serverOfConsumer, servingReplicas } from './placement.js';
import { ReadRetry } from './ReadRetry.js';
import type { ReaderSettings } from './readerSettings.js';

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

/** What an `OrderedReader` reads, and where its messages and its end go. */
export interface ReadTarget {
  readonly stream: string;
  readonly filter: string;
  /** Each message, in stream order, synchronously. */
  readonly onMessage: (message: JsMsg) => void;
  /** Called once if reading stops other than by `stop()`: a `BrokerError`, or what `onRetrying` threw. */
  readonly onEnd: (error: Error) => void;
  /** The tap of whoever takes the messages: while it is paused, no more are pulled (`PacedPull`). */
  readonly flow?: FlowControl | undefined;
}

/** One server-side consumer being read, and how to retire it. */
interface Reading {
  readonly consumer: Consumer;
  remove(): void;
}

/**
 * Reads `filter` in `stream` with an ordered consumer (ephemeral, no acks;
 * the client makes it again after a gap), handing each message to
 * `onMessage` synchronously. The consumer is made again, from the message
 * after the last one read, whenever it may be gone or stuck: after a
 * reconnection (a restarted server forgot it), when two of its heartbeats
 * are missed (its server is away), and when it delivers nothing while the
 * stream's leader holds a message for it (its replica is behind, or skipped
 * it). Each time is reported to `onRetrying`, and making it is tried until
 * `giveUpAfterMs`. `onEnd` is called once if reading stops other than by
 * `stop()`: the connection closed, or the consumer could not be made again.
 * `stop()` closes the consumer and deletes it from the server.
 */
export class OrderedReader {
  private stopped = false;
  /** The stream sequence of the next message to read, once known: after the last one read, or where reading began. */
  private position: number | undefined;
  /** Bumped for each consumer opened: messages and endings of a retired one are ignored. */
  private generation = 0;
  private current: Reading | undefined;
  private readonly status: AsyncIterable<Status> & { stop?: () => void };
  private readonly retry: ReadRetry;
  /** The servers this reader's consumers were on. */
  private readonly readOn = new Set<string>();

  /**
   * Starts reading: the first consumer is made as a lost one is made again,
   * tried until `giveUpAfterMs`; `onEnd` says if it cannot be.
   */
  static open(nc: NatsConnection, target: ReadTarget, start: FollowStart, settings: ReaderSettings): OrderedReader {
    const reader = new OrderedReader(nc, target, start, settings);
    void reader.begin();
    return reader;
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly target: ReadTarget,
    private readonly start: FollowStart,
    private readonly settings: ReaderSettings,
  ) {
    this.status = nc.status();
    this.retry = new ReadRetry(nc, settings);
  }

  /** The servers whose copy of the stream this reader has read, so far. */
  get servers(): readonly string[] {
    return [...this.readOn];
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.status.stop?.();
    this.current?.remove();
  }

  /**
   * Reads again from stream sequence `sequence` on a server whose copy this
   * reader has not read yet (the stream's leader, or a current follower),
   * `why` being reported; `false` when the stream has no such server.
   */
  async rereadElsewhere(sequence: number, why: string): Promise<boolean> {
    const server = this.current && (await serverOfConsumer(this.current.consumer));
    if (server) this.readOn.add(server);
    const { servers } = await servingReplicas(this.nc, this.target.stream);
    if (this.stopped || servers.every((s) => this.readOn.has(s))) return false;
    this.position = sequence;
    void this.reopen(why, new Set(this.readOn));
    return true;
  }

  private async begin(): Promise<void> {
    try {
      await this.retry.call(
        this.what,
        () => this.open(this.start, new Set(), 0),
        () => !this.stopped,
      );
    } catch (err) {
      return this.fail(err);
    }
    void this.followReconnects().catch(() => undefined);
  }

  private get what(): string {
    return `could not read ${this.target.filter} from stream ${this.target.stream}`;
  }

  private async open(from: FollowStart, avoid: ReadonlySet<string>, mine: number): Promise<void> {
    const { nc, target } = this;
    const { consumer, server } = await placeOrdered(nc, target.stream, orderedConfig(target.filter, from), avoid);
    if (this.stopped || mine !== this.generation) return void consumer.delete().catch(() => undefined);
    if (server) this.readOn.add(server);
    this.position ??= (await consumer.info(true)).delivered.stream_seq + 1;
    const watch = new ConsumerWatch(this.watched(), this.settings.idleHeartbeatMs, (why) => void this.lose(mine, why));
    const messages = await this.pull(consumer, watch, mine);
    const reading: Reading = {
      consumer,
      remove: () => {
        watch.stop();
        void messages.close().catch(() => undefined);
        // An ordered consumer is otherwise only cleaned up by its inactivity threshold.
        if (!nc.isClosed()) void consumer.delete().catch(() => undefined);
      },
    };
    if (this.stopped || mine !== this.generation) return reading.remove();
    this.current = reading;
    watch.start();
    this.endWith(messages, mine);
  }

  /** The consumer's messages, each to `onMessage` while the consumer is this reader's current one. */
  private pull(consumer: Consumer, watch: ConsumerWatch, mine: number): Promise<Pulled> {
    const heartbeat = this.settings.idleHeartbeatMs;
    // The server wants a pull to outlast two heartbeats.
    const timing = { expires: Math.max(30_000, 2 * heartbeat), idleHeartbeatMs: heartbeat };
    return pullMessages(this.nc, consumer, timing, this.target.flow, {
      onMessage: (message: JsMsg) => {
        if (this.stopped || mine !== this.generation) return;
        this.position = message.seq + 1;
        watch.delivered();
        this.target.onMessage(message);
      },
      onPull: (notifications) => watch.listen(notifications),
      onLost: (why) => void this.lose(mine, why),
    });
  }

  /** What the watch of a consumer asks: where this reader is, and what the stream's leader holds. */
  private watched(): Watched {
    const { nc, target } = this;
    return {
      position: () => this.position ?? 1,
      paused: () => this.target.flow?.paused ?? false,
      ahead: (from: number) => leaderHolds(nc, target.stream, target.filter, from),
    };
  }

  /** Ends this reader when the consumer's messages end, unless it was retired first. */
  private endWith(messages: Pulled, mine: number): void {
    const { nc } = this;
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
    this.fail(new BrokerError(`stopped reading ${this.target.filter}: ${why}`, { cause }));
  }

  /** Reports a try again to `onRetrying`; `false` if that threw, which ends this reader. */
  private say(error: BrokerError): boolean {
    try {
      this.retry.report(error);
      return true;
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.target.onEnd(err instanceof Error ? err : new BrokerError(String(err)));
  }

  /** The consumer of generation `mine` is lost: another, elsewhere if the stream has another server. */
  private async lose(mine: number, why: string): Promise<void> {
    if (this.stopped || mine !== this.generation || !this.current) return;
    const server = await serverOfConsumer(this.current.consumer);
    if (mine !== this.generation) return;
    await this.reopen(`its consumer on ${server ?? 'its server'} ${why}`, new Set(server ? [server] : []));
  }

  /**
   * A connection lost is said, and given up on after `giveUpAfterMs` (the
   * client may try to reconnect for ever, to a server that is gone); made
   * again, it gets a new consumer.
   */
  private async followReconnects(): Promise<void> {
    const { giveUpAfterMs } = this.settings;
    let away: ReturnType<typeof setTimeout> | undefined;
    try {
      for await (const event of this.status) {
        if (this.stopped) break;
        if (event.type === 'disconnect' && away === undefined) {
          if (!this.say(new BrokerError(`lost the connection to ${event.server}; reading again once it is back`)))
            break;
          // A timer's longest wait: past it, never.
          if (giveUpAfterMs <= 2 ** 31 - 1)
            away = setTimeout(() => this.end(`no connection for ${giveUpAfterMs} ms`, undefined), giveUpAfterMs);
        } else if (event.type === 'reconnect') {
          clearTimeout(away);
          away = undefined;
          await this.reopen(`the connection was made again to ${serverOf(this.nc)}`);
        }
      }
    } finally {
      clearTimeout(away);
    }
  }

  /** A new consumer from the next message to read, away from `avoid` if it can be; tried until it is made. */
  private async reopen(why: string, avoid: ReadonlySet<string> = new Set()): Promise<void> {
    // Retire the old consumer first, so that its closing is not taken for the connection's.
    const mine = ++this.generation;
    this.current?.remove();
    this.current = undefined;
    const from: FollowStart = this.position === undefined ? this.start : { from: 'sequence', sequence: this.position };
    const where = from.from === 'sequence' ? `stream sequence ${from.sequence}` : `its ${from.from}`;
    const going = () => !this.stopped && mine === this.generation;
    if (!this.say(new BrokerError(`reading ${this.target.filter} again from ${where}: ${why}`))) return;
    try {
      await this.retry.call(this.what, () => this.open(from, avoid, mine), going);
    } catch (err) {
      if (going()) this.fail(err);
    }
  }
}
