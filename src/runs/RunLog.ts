// The events of one run, kept whole for its readers: each reader is a place
// in the one log, so a reader that falls behind leaves what it has not read
// here instead of in a copy of its own.
import { Observable, Subject, type Subscriber } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import type { FlowControl } from '../common/FlowControl.js';
import { LoggedEvent } from './LoggedEvent.js';
import type { IndexedEvent } from './wire.js';

/** A run's events from the first, for readers that come while it runs or after it ended. */
export class RunLog {
  private readonly events: LoggedEvent[] = [];
  private ended = false;
  /** Told of each event appended, and of the end; observed by each reader while it reads. */
  private readonly changes = new Subject<void>();

  /**
   * One more event, returned as logged (its serialised forms are made once, for
   * every reader); none once the log has ended, so that no reader that
   * completed misses one.
   */
  append(event: EvoEvent | UnknownEvent): LoggedEvent | undefined {
    if (this.ended) return undefined;
    const logged = new LoggedEvent(this.events.length, event);
    this.events.push(logged);
    this.changes.next();
    return logged;
  }

  /** The run has ended, however it ended (a reader learns how from `onEnd`). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.changes.next();
  }

  /**
   * The events after index `after`, for one reader: handed on while `flow` is
   * not paused; the rest wait in the log until it resumes. Once the log has
   * ended and the reader has read it all, `onEnd` ends the reader (completes
   * or errors it).
   */
  read(after: number, flow: FlowControl | undefined, onEnd: (subscriber: Subscriber<IndexedEvent>) => void) {
    return new Observable<IndexedEvent>((subscriber) =>
      new LogReader(this, after + 1, flow, subscriber, onEnd).start(),
    );
  }

  get length(): number {
    return this.events.length;
  }

  at(index: number): LoggedEvent {
    return this.events[index]!;
  }

  get hasEnded(): boolean {
    return this.ended;
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
  /** Handing events on: a resume or an append while it does is taken by the same loop. */
  private handing = false;

  constructor(
    private readonly log: RunLog,
    private next: number,
    private readonly flow: FlowControl | undefined,
    private readonly subscriber: Subscriber<IndexedEvent>,
    private readonly onEnd: (subscriber: Subscriber<IndexedEvent>) => void,
  ) {}

  /** Hands on what the log holds and follows it; returns the teardown. */
  start(): () => void {
    const changes = this.log.changed$.subscribe(() => this.hand());
    const stopWatching = this.flow?.watch((paused) => {
      if (!paused) this.hand();
    });
    this.hand();
    return () => {
      changes.unsubscribe();
      stopWatching?.();
    };
  }

  private hand(): void {
    if (this.handing) return;
    this.handing = true;
    try {
      while (!this.flow?.paused && !this.subscriber.closed && this.next < this.log.length) {
        this.subscriber.next(this.log.at(this.next++));
      }
    } finally {
      this.handing = false;
    }
    if (this.log.hasEnded && this.next >= this.log.length && !this.subscriber.closed) this.onEnd(this.subscriber);
  }
}
