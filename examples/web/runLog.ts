// The events of one dashboard run, kept whole for its readers: each reader
// is a place in the one log, so a reader that falls behind leaves what it has
// not read here instead of in a copy of its own.
import { Observable, Subject, type Subscriber } from 'rxjs';
import type { EvoEvent, FlowControl, UnknownEvent } from 'evosci-rx';

type RunEvent = EvoEvent | UnknownEvent;

/** A run's events from the first, for readers that come while it runs or after it ended. */
export class RunLog {
  private readonly events: RunEvent[] = [];
  private end = false;
  /** Told of each event appended, and of the end; observed by each reader while it reads. */
  private readonly changes = new Subject<void>();

  /** One more event; none once the run has ended, so that no reader that completed misses one. */
  append(event: RunEvent): void {
    if (this.end) return;
    this.events.push(event);
    this.changes.next();
  }

  /** The run has ended, however it ended (a reader learns how from the run's info). */
  complete(): void {
    if (this.end) return;
    this.end = true;
    this.changes.next();
  }

  /**
   * The events from the first, for one reader: handed on while `flow` is not
   * paused (as `toJsonlStream` pauses it for a reader 64 KiB behind); the
   * rest wait in the log until it resumes. Completes after the last event
   * once the run has ended.
   */
  read(flow: FlowControl): Observable<RunEvent> {
    return new Observable((subscriber) => new LogReader(this, flow, subscriber).start());
  }

  get length(): number {
    return this.events.length;
  }

  at(index: number): RunEvent {
    return this.events[index]!;
  }

  get ended(): boolean {
    return this.end;
  }

  /** Whether a reader is reading. */
  get beingRead(): boolean {
    return this.changes.observed;
  }

  get changed$(): Observable<void> {
    return this.changes;
  }
}

/** One reader's place in a `RunLog`. */
class LogReader {
  private next = 0;
  /** Handing events on: a resume or an append while it does is taken by the same loop. */
  private handing = false;

  constructor(
    private readonly log: RunLog,
    private readonly flow: FlowControl,
    private readonly subscriber: Subscriber<RunEvent>,
  ) {}

  /** Hands on what the log holds and follows it; returns the teardown. */
  start(): () => void {
    const changes = this.log.changed$.subscribe(() => this.hand());
    const stopWatching = this.flow.watch((paused) => {
      if (!paused) this.hand();
    });
    this.hand();
    return () => {
      changes.unsubscribe();
      stopWatching();
    };
  }

  private hand(): void {
    if (this.handing) return;
    this.handing = true;
    try {
      while (!this.flow.paused && !this.subscriber.closed && this.next < this.log.length) {
        this.subscriber.next(this.log.at(this.next++));
      }
    } finally {
      this.handing = false;
    }
    if (this.log.ended && this.next === this.log.length) this.subscriber.complete();
  }
}
