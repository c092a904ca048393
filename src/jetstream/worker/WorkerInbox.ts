import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { DEFAULTS, nanos } from '../wire/defaults.js';
import { BrokerError } from '../wire/errors.js';
import type { JetStreamLayout } from '../wire/layout.js';
import { RequestDelivery } from './RequestDelivery.js';

/** A pull got no answer, not even its expiry, in twice its time: the link or the consumer is gone. */
export class PullOverdueError extends BrokerError {
  static {
    this.prototype.name = 'PullOverdueError';
  }

  constructor(ms: number) {
    super(`a pull for a run request got no answer in ${ms} ms`);
  }
}

/** The pull in hand: the one `next()` waits on. */
interface Pull {
  readonly token: number;
  readonly resolve: (delivery: RequestDelivery | null) => void;
  readonly reject: (err: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * Status codes that end a pull without a request: 404 none waiting, 408
 * expired. Any other (409: too many pulls waiting, a leadership change, the
 * consumer deleted; 503: no consumer) rejects it, and the worker pauses
 * before it pulls again rather than asking in a loop.
 */
const ENDED_EMPTY = new Set([404, 408]);
/** The idle heartbeat status: a pull that is still waiting. */
const HEARTBEAT = 100;

/** The connection's own inbox prefix (its permissions may allow only that one), which its type does not show. */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as { readonly options?: { readonly inboxPrefix?: string } }).options?.inboxPrefix;
}

/**
 * A worker's pulls from the workers' consumer, one at a time, every one
 * answered on one inbox that lives as long as the worker.
 *
 * The official client's `next()` gives each pull an inbox of its own, and
 * drops it once two heartbeats are missed. On a link whose writes are held
 * (a one-way partition) that pull, and the unsubscribe of its inbox, reach the
 * server after the client gave up: the server still delivers a request to it,
 * the client drops the delivery, and the request waits out the ack wait
 * unseen. Here every delivery reaches the worker, whichever pull it answers:
 * the pull in hand takes it, and one the worker has no room for is handed
 * straight back. A pull's answer overdue by its whole expiry ends it, and the
 * next pull goes out; the late answer is still taken.
 */
export class WorkerInbox {
  private readonly inbox: string;
  private readonly subscription: Subscription;
  private readonly pullSubject: string;
  private tokens = 0;
  private pull: Pull | undefined;
  /** Deliveries no pull waited for, offered to the next `next()` in this turn, then handed back. */
  private readonly unclaimed: RequestDelivery[] = [];
  /** Set once the inbox was refused: no pull can be answered again. */
  failure: Error | undefined;
  private stopping = false;

  constructor(
    private readonly nc: NatsConnection,
    layout: JetStreamLayout,
    private readonly expiresMs: number,
    /** Takes a delivery of a request the worker is running already (a redelivery): it keeps it, with or without room. */
    private readonly adopt: (delivery: RequestDelivery) => boolean,
  ) {
    this.pullSubject = `$JS.API.CONSUMER.MSG.NEXT.${layout.requestsStream}.${layout.workersConsumer}`;
    this.inbox = createInbox(inboxPrefixOf(nc));
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => (err ? this.fail(err) : this.receive(msg)),
    });
  }

  /**
   * The next request, or `null` when the pull ended without one (or its
   * answer is overdue). Rejects when the server refuses the pull, or the
   * inbox was refused (a permissions violation).
   */
  next(): Promise<RequestDelivery | null> {
    if (this.failure) return Promise.reject(this.failure);
    const unclaimed = this.unclaimed.shift();
    if (unclaimed) return Promise.resolve(unclaimed);
    const token = ++this.tokens;
    return new Promise<RequestDelivery | null>((resolve, reject) => {
      const timer = setTimeout(() => this.end(token, new PullOverdueError(2 * this.expiresMs)), 2 * this.expiresMs);
      this.pull = { token, resolve, reject, timer };
      try {
        const body = JSON.stringify({ batch: 1, expires: nanos(this.expiresMs) });
        this.nc.publish(this.pullSubject, body, { reply: `${this.inbox}.${token}` });
      } catch (err) {
        this.end(token, err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /**
   * Takes no more requests: the pull in hand ends now, and what the server
   * still delivers to this worker's pulls goes back at once, until they have
   * all expired; then the inbox closes.
   */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.pull) this.end(this.pull.token, null);
    const close = setTimeout(() => this.subscription.unsubscribe(), 2 * this.expiresMs);
    close.unref?.();
  }

  /** Hands an unreadable delivery back; a connection that is closing takes nothing, and its redelivery comes after the ack wait. */
  private handBack(reply: string): void {
    try {
      this.nc.publish(reply, '-NAK');
    } catch {
      // Draining or closed: nothing to do.
    }
  }

  private receive(msg: Msg): void {
    if (msg.reply?.startsWith('$JS.ACK.')) {
      // A reply this worker cannot read is handed back, never thrown: a throw here would end the connection's reading.
      let delivery: RequestDelivery;
      try {
        delivery = new RequestDelivery(this.nc, msg);
      } catch {
        return this.handBack(msg.reply);
      }
      return this.deliver(delivery, Number(msg.subject.slice(this.inbox.length + 1)));
    }
    const token = Number(msg.subject.slice(this.inbox.length + 1));
    const code = msg.headers?.code ?? 0;
    if (code === HEARTBEAT || token !== this.pull?.token) return;
    if (ENDED_EMPTY.has(code)) return this.end(token, null);
    this.end(token, new BrokerError(`the workers' consumer refused a pull: ${code} ${msg.headers?.description ?? ''}`));
  }

  /** A delivery that answers the pull `token` (the one in hand, or one given up on). */
  private deliver(delivery: RequestDelivery, token: number): void {
    // A redelivery of a run in progress here: kept, and the pull it answered is over.
    if (this.adopt(delivery)) return this.end(token, null);
    if (this.stopping) return delivery.nak();
    if (this.pull) return this.end(this.pull.token, delivery);
    // A pull given up on was answered while the worker has no pull out. A worker that is about
    // to pull again takes it in this turn; one with no room hands it to the rest of the fleet.
    this.unclaimed.push(delivery);
    if (this.unclaimed.length === 1) {
      setImmediate(() => {
        for (const left of this.unclaimed.splice(0)) left.nak(DEFAULTS.retakeDelayMs);
      });
    }
  }

  private end(token: number, outcome: RequestDelivery | null | Error): void {
    const pull = this.pull;
    if (pull?.token !== token) return;
    this.pull = undefined;
    clearTimeout(pull.timer);
    if (outcome instanceof Error) pull.reject(outcome);
    else pull.resolve(outcome);
  }

  private fail(err: Error): void {
    this.failure = new BrokerError(`could not receive run requests on ${this.inbox}.*`, { cause: err });
    if (this.pull) this.end(this.pull.token, this.failure);
  }
}
