import type { RequestDelivery } from './RequestDelivery.js';

/** What a lease does with a delivery of its request. */
export type LeasedDelivery = Pick<RequestDelivery, 'working' | 'confirmWorking' | 'ackAck' | 'nak'>;

/** How a lease confirms its request: every `heartbeatMs`, each try waiting `answerMs` for the server, again after `retryMs`. */
export interface LeaseTiming {
  /** Between confirmations the server answered. */
  readonly heartbeatMs: number;
  /** How long one confirmation waits for the server's answer. */
  readonly answerMs: number;
  /** Between tries while the server does not answer (its consumer has no leader). */
  readonly retryMs: number;
}

/** What a lease tells its attempt. */
export interface LeaseHooks {
  /** At each heartbeat, before the confirmation goes out. */
  onBeat(): void;
  /** A confirmation the server did not answer, and how long since it last did: it is tried again after `retryMs`. */
  onUnconfirmed(error: unknown, unconfirmedForMs: number): void;
}

/**
 * A worker's hold on a request it runs: it confirms the request is being
 * worked on every `heartbeatMs` while the run lasts, through the latest
 * delivery of it, which is the one the server waits on. Each confirmation
 * awaits the server's answer: during an election of the consumer's leader
 * no server holds the request's ack wait, and a confirmation sent then is
 * lost, so it is tried again every `retryMs` until one is answered, and the
 * new leader hears of the worker well within its ack wait rather than give
 * the request to another worker. It ends acknowledged, handed back or left
 * to another attempt.
 */
export class RequestLease {
  private msg: LeasedDelivery;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  private confirmedAt = Date.now();
  private beatAt = Date.now();

  constructor(
    msg: LeasedDelivery,
    private readonly timing: LeaseTiming,
    private readonly hooks: LeaseHooks,
  ) {
    this.msg = msg;
    this.next(timing.heartbeatMs, () => this.beat());
  }

  /** Delivered again while this worker runs it (its confirmation reached the server late): keeps it. */
  adopt(msg: LeasedDelivery): void {
    this.msg = msg;
    msg.working();
  }

  /** Done with the request: acknowledged, so that it leaves the work queue. */
  ack(): void {
    this.end();
    void this.msg.ackAck().catch(() => undefined);
  }

  /** Handed back, at once or after `delayMs`: another worker starts the next attempt. */
  nak(delayMs?: number): void {
    this.end();
    this.msg.nak(delayMs);
  }

  /** Left alone: another attempt owns the request now. */
  release(): void {
    this.end();
  }

  private beat(): void {
    this.beatAt = Date.now();
    this.hooks.onBeat();
    this.confirm();
  }

  /**
   * One confirmation: the next heartbeat once answered, another try soon if
   * not. While tries go unanswered the beats keep their rhythm: the run's own
   * checks (a cancel stored, a later attempt) must not wait for the server.
   */
  private confirm(): void {
    if (this.ended) return;
    this.msg.confirmWorking(this.timing.answerMs).then(
      () => {
        this.confirmedAt = Date.now();
        this.next(this.timing.heartbeatMs, () => this.beat());
      },
      (error: unknown) => {
        if (this.ended) return;
        this.hooks.onUnconfirmed(error, Date.now() - this.confirmedAt);
        const beatDue = Date.now() - this.beatAt >= this.timing.heartbeatMs;
        this.next(this.timing.retryMs, () => (beatDue ? this.beat() : this.confirm()));
      },
    );
  }

  private next(ms: number, step: () => void): void {
    if (this.ended) return;
    this.timer = setTimeout(step, ms);
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
  }
}
