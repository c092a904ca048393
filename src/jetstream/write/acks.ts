import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { PubAck } from '@nats-io/jetstream';
import { systemClock, type Clock, type Timer } from '../../process/clock.js';
import { IN_PROCESS, UNAVAILABLE } from '../wire/backoff.js';

/** The stream's own refusal of a message, with JetStream's error code (10071: wrong last sequence). */
export class StoreRefusal extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

/** How long a publish of the collector waits for its ack in all, and how long without one before it is sent again (`Infinity`: never). */
export interface AckWait {
  readonly timeoutMs: number;
  readonly resendAfterMs: number;
}

/** A publish awaiting its stream's ack: what to send again, and when it was last sent. */
interface Waiter {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: MsgHdrs;
  readonly reply: string;
  readonly resolve: (ack: PubAck) => void;
  readonly reject: (err: Error) => void;
  readonly deadline: number;
  readonly resendAfterMs: number;
  /** When it was last sent, and its place among every send of the collector. */
  sentAt: number;
  sentOrder: number;
}

/** A stream's answer to a publish, as JetStream sends it. */
type Answer = PubAck & { error?: { code?: number; err_code?: number; description?: string } };

const collectors = new WeakMap<NatsConnection, AckCollector>();

/**
 * Whether an ack says the message is stored. A clustered stream answers a
 * publish whose `Nats-Msg-Id` it is still proposing as a duplicate at
 * sequence 0: that message is not stored yet, and is never stored if the
 * proposal is lost in a leader change.
 */
export function isStored(ack: PubAck): boolean {
  return !(ack.duplicate && ack.seq === 0);
}

/**
 * JetStream publishes whose acks come back on one subscription, as the Go
 * client's PublishAsync does: a publish with a reply subject is JetStream's
 * own protocol, and the stream answers each with its PubAck. `js.publish`
 * makes a request per message instead (a reply mapping, a timer and an Error
 * for its stack each time), which costs more than everything else on the path.
 *
 * A publish lost in a leader change has no answer: it is sent again (same
 * `Nats-Msg-Id`, which the stream de-duplicates) once a later publish on its
 * subject is stored (the leader is there, and this one did not reach it),
 * and after `resendAfterMs` in which its subject had no ack at all. An ack
 * that does not say "stored" (a duplicate at sequence 0, an id in process, no
 * leader yet) is no answer. Timers are swept a few times per wait rather
 * than set one by one.
 */
export class AckCollector {
  private readonly inbox = createInbox();
  private readonly waiters = new Map<number, Waiter>();
  /** When each subject with a publish awaiting its ack last had one stored. */
  private readonly lastAck = new Map<string, number>();
  private next = 0;
  /**
   * The tokens awaiting their ack of each subject, oldest first: a stored ack
   * looks only at its own subject's, so a publish left unanswered on one run
   * costs the acks of the others nothing.
   */
  private readonly unanswered = new Map<string, Set<number>>();
  private sends = 0;
  private sweeper: Timer | undefined;
  private sweepEveryMs = Infinity;
  private readonly subscription: Subscription;

  /** The collector of `nc`, made on first use with `clock` (the system's, or a test's virtual one). */
  static of(nc: NatsConnection, clock: Clock = systemClock): AckCollector {
    let collector = collectors.get(nc);
    if (!collector) {
      collector = new AckCollector(nc, clock);
      collectors.set(nc, collector);
    }
    return collector;
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly clock: Clock,
  ) {
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => (err ? undefined : this.answer(msg)),
    });
    void nc.closed().then(() => this.failAll(new Error('connection closed')));
  }

  /** Publishes `data` with a reply subject of this collector; resolves with the stream's ack once it is stored. */
  publish(subject: string, data: Uint8Array, headers: MsgHdrs, wait: AckWait): Promise<PubAck> {
    const token = this.next++;
    return new Promise<PubAck>((resolve, reject) => {
      const now = this.clock.now();
      const waiter: Waiter = {
        subject,
        data,
        headers,
        reply: `${this.inbox}.${token}`,
        resolve,
        reject,
        deadline: now + wait.timeoutMs,
        resendAfterMs: wait.resendAfterMs,
        sentAt: now,
        sentOrder: 0,
      };
      try {
        this.send(waiter);
      } catch (err) {
        return reject(err instanceof Error ? err : new Error(String(err)));
      }
      this.waiters.set(token, waiter);
      this.awaiting(subject).add(token);
      this.sweepEvery(Math.max(50, Math.floor(Math.min(wait.timeoutMs, wait.resendAfterMs) / 4)));
    });
  }

  /** Publishes awaiting their ack. */
  get pending(): number {
    return this.waiters.size;
  }

  private send(waiter: Waiter): void {
    this.nc.publish(waiter.subject, waiter.data, { reply: waiter.reply, headers: waiter.headers });
    waiter.sentAt = this.clock.now();
    waiter.sentOrder = ++this.sends;
  }

  private answer(msg: Msg): void {
    const token = Number(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
    const waiter = this.waiters.get(token);
    if (!waiter) return; // answered already, or timed out: the retry has its own answer
    if (msg.data.length === 0) {
      // A status without a body: 503, no stream listens on the subject (or JetStream is starting).
      return this.settle(token, waiter, new Error(`no responders (${msg.headers?.code ?? 'no status'})`));
    }
    let ack: Answer;
    try {
      ack = JSON.parse(msg.string()) as Answer;
    } catch (err) {
      return this.settle(token, waiter, err as Error);
    }
    if (ack.error) {
      const code = ack.error.err_code;
      // No leader yet, or the id still being proposed: sent again on the next sign or sweep.
      if (code === UNAVAILABLE || code === IN_PROCESS) return;
      const why = ack.error.description ?? ack.error.code;
      return this.settle(token, waiter, new StoreRefusal(`JetStream refused the message: ${why}`, code));
    }
    if (!isStored(ack)) return;
    this.settle(token, waiter, ack);
    this.lastAck.set(waiter.subject, this.clock.now());
    this.resendBefore(token, waiter);
  }

  private awaiting(subject: string): Set<number> {
    let tokens = this.unanswered.get(subject);
    if (!tokens) this.unanswered.set(subject, (tokens = new Set()));
    return tokens;
  }

  private settle(token: number, waiter: Waiter, outcome: PubAck | Error): void {
    this.waiters.delete(token);
    const tokens = this.unanswered.get(waiter.subject);
    if (tokens?.delete(token) && tokens.size === 0) this.unanswered.delete(waiter.subject);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  /**
   * `stored` is stored, on its subject: publishes on that subject sent before
   * its last send and still unanswered did not reach the leader that stored
   * it (acks come back in the order a leader stores), so they are sent again.
   */
  private resendBefore(token: number, stored: Waiter): void {
    const tokens = this.unanswered.get(stored.subject);
    if (!tokens) return;
    // Oldest first: the loop ends at the first later one, most often at once.
    // A resend that fails deletes its token as the loop goes, which a Set allows.
    for (const earlier of tokens) {
      if (earlier > token) break;
      const waiter = this.waiters.get(earlier);
      if (!waiter || waiter.resendAfterMs === Infinity) continue;
      if (waiter.sentOrder < stored.sentOrder) this.resend(earlier, waiter);
    }
  }

  private resend(token: number, waiter: Waiter): void {
    try {
      this.send(waiter);
    } catch (err) {
      this.settle(token, waiter, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private sweepEvery(ms: number): void {
    if (this.sweeper && ms >= this.sweepEveryMs) return;
    this.sweeper?.clear();
    this.sweepEveryMs = ms;
    this.sweeper = this.clock.schedule(ms, () => this.sweep());
  }

  /** Fails the publishes past their deadline, and sends again those whose subject has been silent `resendAfterMs`. */
  private sweep(): void {
    this.sweeper = undefined;
    const now = this.clock.now();
    const live = new Set<string>();
    for (const [token, waiter] of this.waiters) {
      if (waiter.deadline <= now) {
        this.settle(token, waiter, new Error('timeout waiting for the ack'));
        continue;
      }
      live.add(waiter.subject);
      const quietSince = Math.max(waiter.sentAt, this.lastAck.get(waiter.subject) ?? -Infinity);
      if (now - quietSince >= waiter.resendAfterMs) this.resend(token, waiter);
    }
    for (const subject of this.lastAck.keys()) if (!live.has(subject)) this.lastAck.delete(subject);
    const every = this.sweepEveryMs;
    this.sweepEveryMs = Infinity;
    if (this.waiters.size > 0) this.sweepEvery(every);
  }

  private failAll(err: Error): void {
    this.sweeper?.clear();
    this.sweeper = undefined;
    for (const waiter of this.waiters.values()) waiter.reject(err);
    this.waiters.clear();
    this.unanswered.clear();
    this.subscription.unsubscribe();
    collectors.delete(this.nc);
  }
}
