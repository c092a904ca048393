import type { Clock, Timer } from './clock.js';

/**
 * The signals that stop a process, sent in turn, `graceMs` apart, until the
 * process is gone. A plain class on a `Clock`, so that the ladder is tested
 * in virtual time.
 */
export class StopLadder {
  private readonly sent: NodeJS.Signals[] = [];
  private timer: Timer | undefined;
  private halted = false;

  constructor(
    private readonly signals: readonly NodeJS.Signals[],
    private readonly graceMs: number,
    private readonly clock: Clock,
    private readonly send: (signal: NodeJS.Signals) => void,
  ) {}

  /** The signals sent so far, in order. */
  get signalsSent(): readonly NodeJS.Signals[] {
    return this.sent;
  }

  /** Sends the first signal, then each next one `graceMs` later; a second call changes nothing. */
  climb(): void {
    if (this.sent.length === 0 && !this.halted) this.step(0);
  }

  /** The process is gone: no more signals. */
  halt(): void {
    this.halted = true;
    this.timer?.clear();
  }

  private step(index: number): void {
    const signal = this.signals[index];
    if (signal === undefined || this.halted) return;
    this.sent.push(signal);
    this.send(signal);
    this.timer = this.clock.schedule(this.graceMs, () => this.step(index + 1));
  }
}
