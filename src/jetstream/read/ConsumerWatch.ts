import type { ConsumerNotification } from '@nats-io/jetstream';

/** What a `ConsumerWatch` asks: where the reader is, and what the stream holds. */
export interface Watched {
  /** The stream sequence of the next message the reader needs. */
  position(): number;
  /**
   * The sequence of the first message at or after `from` that the stream's
   * leader holds for the reader, `undefined` for none (or no answer).
   */
  ahead(from: number): Promise<number | undefined>;
  /** Whether the reader asked for no more for now (its flow is paused): delivering nothing then is no fault. */
  paused?(): boolean;
}

/**
 * Watches one consumer of a reader, and says once when it is lost. The client
 * only tells heartbeats missed, and then asks for the consumer's info again
 * and again, which a consumer whose only server is gone answers as "offline"
 * for as long as it is gone. So: two heartbeats missed, the consumer is lost.
 * And a consumer whose heartbeats come but that delivers nothing is asked
 * about: once per `idleMs` of nothing delivered, the stream's leader is asked
 * for the next message the reader needs; found at two checks in a row with
 * nothing delivered between, the consumer is lost too (its replica is behind,
 * or skipped what it holds). Not while the reader is paused: it asked for
 * nothing.
 */
export class ConsumerWatch {
  private timer: ReturnType<typeof setInterval> | undefined;
  private moved = false;
  /** The message the leader held at the last check, if nothing was delivered since. */
  private awaited: number | undefined;
  private done = false;
  /** A question to the leader is out: the next check waits for its answer. */
  private asking = false;

  constructor(
    private readonly watched: Watched,
    private readonly idleMs: number,
    private readonly lost: (why: string) => void,
  ) {}

  /** Watches from now on: the consumer's notifications (`ConsumerMessages.status()`), if given, and a timer. */
  start(notifications?: AsyncIterable<ConsumerNotification>): void {
    if (notifications) this.listen(notifications);
    this.timer = setInterval(() => void this.check(), this.idleMs);
  }

  /** Follows the notifications of one more of the consumer's pulls. */
  listen(notifications: AsyncIterable<ConsumerNotification>): void {
    void this.follow(notifications).catch(() => undefined);
  }

  /** A message came. */
  delivered(): void {
    this.moved = true;
  }

  stop(): void {
    this.done = true;
    clearInterval(this.timer);
  }

  private async follow(notifications: AsyncIterable<ConsumerNotification>): Promise<void> {
    for await (const note of notifications) {
      if (this.done) return;
      if (note.type === 'heartbeats_missed')
        return this.lose(`missed ${note.count} heartbeats ${this.idleMs} ms apart: its server is away, or it is gone`);
    }
  }

  private async check(): Promise<void> {
    if (this.moved || this.watched.paused?.()) {
      this.moved = false;
      this.awaited = undefined;
      return;
    }
    if (this.asking) return;
    this.asking = true;
    const next = await this.watched.ahead(this.watched.position()).catch(() => undefined);
    this.asking = false;
    if (this.done || this.moved) return;
    if (next !== undefined && this.awaited !== undefined) {
      return this.lose(
        `delivered nothing at two checks ${this.idleMs} ms apart while the stream's leader holds message ${next} for it: its replica is behind, or skipped it`,
      );
    }
    this.awaited = next;
  }

  private lose(why: string): void {
    if (this.done) return;
    this.stop();
    this.lost(why);
  }
}
