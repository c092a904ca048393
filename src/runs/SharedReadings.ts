// The readers of one hub process share one reading of each run they read
// from a store (JetStream, a directory): one consumer on the broker, or one
// read of the file, and one log in memory, however many browser tabs follow
// it, as the readers of a live run share its log.
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import type { FlowControl } from '../common/FlowControl.js';
import { RunLog } from './RunLog.js';
import type { IndexedEvent } from './wire.js';

/**
 * The most bytes of JSONL a run of a directory may have for its readers to
 * share one reading of it, held in memory while they read; a larger run is
 * read by each reader on its own, paused at its own place.
 */
export const SHARED_READ_BYTES = 4 * 1024 * 1024;

/** How a run's ending reached its shared reading: completed, or the error every reader of it gets. */
type Ending = { readonly error: unknown } | 'completed';

/** One run read once for its readers in this process: its events in a log, each reader at its own place. */
class SharedReading {
  private readonly log = new RunLog();
  private readers = 0;
  private ending: Ending | undefined;
  private subscription: Subscription | undefined;

  constructor(
    private readonly events$: Observable<IndexedEvent>,
    /** Told once no one will read this reading again: its run's next reader makes a new one. */
    private readonly onDone: () => void,
  ) {}

  /** Whether a reader who comes now may join it: not once it failed (a new reading may get further). */
  get joinable(): boolean {
    return this.ending === undefined || this.ending === 'completed';
  }

  /** One more reader, after index `after`; the reading starts with its first. Returns its teardown. */
  read(after: number, flow: FlowControl | undefined, subscriber: Subscriber<IndexedEvent>): () => void {
    this.readers++;
    const reading = this.log.read(after, flow, (reader) => this.endReader(reader)).subscribe(subscriber);
    this.subscription ??= this.events$.subscribe({
      next: (event) => this.append(event),
      complete: () => this.end('completed'),
      error: (error: unknown) => this.end({ error }),
    });
    return () => {
      reading.unsubscribe();
      if (--this.readers > 0) return;
      this.subscription?.unsubscribe();
      this.onDone();
    };
  }

  private append({ index, event }: IndexedEvent): void {
    // The log's indexes are its readers' ids: an event out of its place would give them wrong ones.
    if (index !== this.log.length)
      return this.end({ error: new Error(`event ${index} came where ${this.log.length} was due`) });
    this.log.append(event);
  }

  private end(ending: Ending): void {
    if (this.ending !== undefined) return;
    this.ending = ending;
    this.subscription?.unsubscribe();
    // A failed reading takes no new readers: those who come next read the run again.
    if (ending !== 'completed') this.onDone();
    this.log.end();
  }

  private endReader(subscriber: Subscriber<IndexedEvent>): void {
    const { ending } = this;
    if (ending === 'completed' || ending === undefined) subscriber.complete();
    else subscriber.error(ending.error);
  }
}

/**
 * The runs being read in this hub process, one shared reading each: the
 * first reader of a run opens it (one consumer on the broker, one read of a
 * file), the readers
 * after it join it at their own place, and it closes with its last reader.
 * Its log keeps the run's events while anyone reads it; each reader takes
 * them at its own pace, a slow one pausing only itself.
 */
export class SharedReadings {
  private readonly readings = new Map<string, SharedReading>();

  constructor(
    /** The run's events from its first, as one reader would read them alone. */
    private readonly open: (id: string) => Observable<IndexedEvent>,
  ) {}

  /** The run's events after index `after`, from the reading of the run this process shares. */
  follow(id: string, after: number, flow: FlowControl | undefined): Observable<IndexedEvent> {
    return new Observable<IndexedEvent>((subscriber) => {
      let reading = this.readings.get(id);
      if (!reading?.joinable) {
        const made: SharedReading = new SharedReading(this.open(id), () => {
          if (this.readings.get(id) === made) this.readings.delete(id);
        });
        this.readings.set(id, made);
        reading = made;
      }
      return reading.read(after, flow, subscriber);
    });
  }

  /** Whether a reader of the run would join a reading open now: the run is known, no lookup needed. */
  reading(id: string): boolean {
    return this.readings.get(id)?.joinable ?? false;
  }
}
