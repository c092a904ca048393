import type { RequestDelivery } from './RequestDelivery.js';

/**
 * A worker's hold on a request it runs: it confirms the request is being
 * worked on (`working()`) every `heartbeatMs` while the run lasts, through
 * the latest delivery of it, which is the one the server waits on, and calls
 * `onBeat` each time. It ends acknowledged, handed back or left to another
 * attempt.
 */
export class RequestLease {
  private msg: RequestDelivery;
  private readonly timer: ReturnType<typeof setInterval>;

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
}
