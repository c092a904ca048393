import type { Subscription } from 'rxjs';
import type { RequestDelivery } from './RequestDelivery.js';

/**
 * A request a worker is running: it confirms the request is being worked on
 * (`working()`) every `heartbeatMs` while the run lasts, through the latest
 * delivery of it, which is the one the server waits on, and calls `onBeat`
 * each time.
 */
export class ActiveRun {
  private msg: RequestDelivery;
  private readonly timer: ReturnType<typeof setInterval>;
  subscription: Subscription | undefined;

  constructor(msg: RequestDelivery, heartbeatMs: number, onBeat: () => void) {
    this.msg = msg;
    this.timer = setInterval(() => {
      this.msg.working();
      onBeat();
    }, heartbeatMs);
  }

  /** Delivered again while this worker runs it (its confirmation reached the server late): keeps it. */
  adopt(msg: RequestDelivery): void {
    this.msg = msg;
    msg.working();
  }

  /** Done with the request: acknowledged, so that it leaves the work queue. */
  ack(): void {
    clearInterval(this.timer);
    void this.msg.ackAck().catch(() => undefined);
  }

  /** Handed back, at once or after `delayMs`: another worker starts the next attempt. */
  nak(delayMs?: number): void {
    clearInterval(this.timer);
    this.msg.nak(delayMs);
  }

  /** Left alone: another attempt owns the request now. */
  release(): void {
    clearInterval(this.timer);
  }

  /** Stops the run and hands the request back. */
  stop(): void {
    this.subscription?.unsubscribe();
    this.nak();
  }
}
