import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { PubAck } from '@nats-io/jetstream';

/** The stream's own refusal of a message, with JetStream's error code (10071: wrong last sequence). */
export class StoreRefusal extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

interface Waiter {
  readonly resolve: (ack: PubAck) => void;
  readonly reject: (err: Error) => void;
  readonly deadline: number;
}

const collectors = new WeakMap<NatsConnection, AckCollector>();

/**
 * JetStream publishes whose acks come back on one subscription, as the Go
 * client's PublishAsync does: a publish with a reply subject is JetStream's
 * own protocol, and the stream answers each with its PubAck. `js.publish`
 * makes a request per message instead (a reply mapping, a timer and an Error
 * for its stack each time), which costs more than everything else on the path.
 * Timeouts are swept a few times per ack timeout rather than timed one by one.
 */
export class AckCollector {
  private readonly inbox = createInbox();
  private readonly waiters = new Map<number, Waiter>();
  private next = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private readonly subscription: Subscription;

  static of(nc: NatsConnection): AckCollector {
    let collector = collectors.get(nc);
    if (!collector) {
      collector = new AckCollector(nc);
      collectors.set(nc, collector);
    }
    return collector;
  }

  private constructor(private readonly nc: NatsConnection) {
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => (err ? undefined : this.answer(msg)),
    });
    void nc.closed().then(() => this.failAll(new Error('connection closed')));
  }

  /** Publishes `data` with a reply subject of this collector; resolves with the stream's ack. */
  publish(subject: string, data: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<PubAck> {
    const token = this.next++;
    return new Promise<PubAck>((resolve, reject) => {
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, headers });
      } catch (err) {
        return reject(err instanceof Error ? err : new Error(String(err)));
      }
      this.waiters.set(token, { resolve, reject, deadline: Date.now() + timeoutMs });
      this.sweeper ??= setInterval(() => this.sweep(), Math.max(50, Math.floor(timeoutMs / 4)));
      this.sweeper.unref?.();
    });
  }

  private answer(msg: Msg): void {
    const token = Number(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
    const waiter = this.waiters.get(token);
    if (!waiter) return; // timed out already: the retry has its own answer
    this.waiters.delete(token);
    if (msg.data.length === 0) {
      // A status without a body: 503, no stream listens on the subject (or JetStream is starting).
      return waiter.reject(new Error(`no responders (${msg.headers?.code ?? 'no status'})`));
    }
    try {
      const ack = JSON.parse(msg.string()) as PubAck & {
        error?: { code?: number; err_code?: number; description?: string };
      };
      if (ack.error) {
        const why = ack.error.description ?? ack.error.code;
        return waiter.reject(new StoreRefusal(`JetStream refused the message: ${why}`, ack.error.err_code));
      }
      waiter.resolve(ack);
    } catch (err) {
      waiter.reject(err as Error);
    }
  }

  /** Waiters are in the order they were published: the expired ones are at the front. */
  private sweep(): void {
    const now = Date.now();
    for (const [token, waiter] of this.waiters) {
      if (waiter.deadline > now) break;
      this.waiters.delete(token);
      waiter.reject(new Error('timeout waiting for the ack'));
    }
    if (this.waiters.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private failAll(err: Error): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const waiter of this.waiters.values()) waiter.reject(err);
    this.waiters.clear();
    this.subscription.unsubscribe();
    collectors.delete(this.nc);
  }
}
