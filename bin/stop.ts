// What stops the command early: a signal (Ctrl-C, SIGTERM, SIGHUP), or an
// output that broke. Installed before anything is opened, so that a signal
// is always heard, whatever the command is waiting for.
import { Subject } from 'rxjs';

const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;
type StopSignal = keyof typeof SIGNALS;

export class Stop {
  /** Emits at each signal and each broken output. */
  readonly stop$ = new Subject<void>();
  /** Resolves at the first signal. */
  readonly signalled: Promise<void>;
  private signal: StopSignal | undefined;
  private why: string | undefined;

  constructor() {
    let heard!: () => void;
    this.signalled = new Promise((resolve) => (heard = resolve));
    for (const name of Object.keys(SIGNALS) as StopSignal[]) {
      process.on(name, () => {
        this.signal ??= name;
        heard();
        this.stop$.next();
      });
    }
  }

  /** 128 + the signal's number once a signal stopped the command. */
  get signalStatus(): number | undefined {
    return this.signal && 128 + SIGNALS[this.signal];
  }

  /** What broke, e.g. `standard output was closed`. */
  get broken(): string | undefined {
    return this.why;
  }

  /** The error handler of an output: the first failure is kept, and stops the command. */
  breaks(what: string): (err: Error) => void {
    return (err) => {
      this.why ??= (err as NodeJS.ErrnoException).code === 'EPIPE' ? `${what} was closed` : `${what}: ${err.message}`;
      this.stop$.next();
    };
  }

  /** Waits `ms`, or less if a signal comes: `true` if one did. */
  async pause(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([this.signalled.then(() => true), waited]);
    } finally {
      clearTimeout(timer);
    }
  }
}
