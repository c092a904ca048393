// The readers of one hub process share one reading of each run they read
// from a store (JetStream, a directory): one consumer on the broker, or one
// read of the file, and one log in memory, however many browser tabs follow
// it, as the readers of a live run share its log. The log is bounded in
// bytes: past the bound, a reader that stays behind (an idle browser tab)
// would make the hub hold the whole run, so the readers go on alone instead.
import { catchError, defer, Observable, tap, throwError, type Subscriber, type Subscription } from 'rxjs';
import type { FlowControl } from '../common/FlowControl.js';
import { KeptReadings } from './KeptReadings.js';
import { RunLog } from './RunLog.js';
import type { IndexedEvent } from './wire.js';

/**
 * The most bytes of JSONL a shared reading of a run holds in memory for its
 * readers; past it each of them reads the run alone, from its own place, and
 * the shared log is let go. A directory hub reads a larger run alone from the
 * start, knowing its size from its file.
 */
export const SHARED_READ_BYTES = 4 * 1024 * 1024;

/** The run's events after index `after`, as one reader reads them alone (paused by `flow` where the store can). */
export type OpenReading = (id: string, after: number, flow: FlowControl | undefined) => Observable<IndexedEvent>;

/** How a run's ending reached its shared reading: completed, or the error every reader of it gets. */
type Ending = { readonly error: unknown } | 'completed';

/**
 * The signal a shared reading gives each of its readers when its log passes
 * its bound: not an ending of the run, so the reader goes on alone after the
 * last event it was given. A class of this module's own, so that no error of
 * the run is taken for it.
 */
class Overflowed {}

/** One run read once for its readers in this process: its events in a log, each reader at its own place. */
class SharedReading {
  private readonly log = new RunLog();
  private readonly readers = new Set<Subscriber<IndexedEvent>>();
  private bytes = 0;
  private ending: Ending | Overflowed | undefined;
  private subscription: Subscription | undefined;

  constructor(
    private readonly events$: Observable<IndexedEvent>,
    /** Bytes of JSONL its log may hold before its readers go on alone. */
    private readonly maxBytes: number,
    /** Told once no one will join this reading again: its run's next reader makes a new one. */
    private readonly onDone: () => void,
    /** Where it waits, once its run has ended and its last reader left, for readers who come soon after. */
    private readonly kept: KeptReadings,
  ) {}

  /** Whether a reader who comes now may join it: not once it failed (a new reading may get further) or overflowed. */
  get joinable(): boolean {
    return this.ending === undefined || this.ending === 'completed';
  }

  /** One more reader, after index `after`; the reading starts with its first. Returns its teardown. */
  read(after: number, flow: FlowControl | undefined, subscriber: Subscriber<IndexedEvent>): () => void {
    this.kept.take(this);
    this.readers.add(subscriber);
    const reading = this.log.read(after, flow, (reader) => this.endReader(reader)).subscribe(subscriber);
    if (!this.subscription) {
      this.subscription = this.events$.subscribe({
        next: (event) => this.append(event),
        complete: () => this.end('completed'),
        error: (error: unknown) => this.end({ error }),
      });
      // An ending while it subscribed found no subscription to stop.
      if (this.ending !== undefined) this.subscription.unsubscribe();
    }
    return () => {
      reading.unsubscribe();
      this.readers.delete(subscriber);
      if (this.readers.size > 0) return;
      // A run that ended has all its events in the log: it is kept for the next readers, with nothing to stop.
      if (this.ending === 'completed') return this.kept.keep(this, this.bytes, this.onDone);
      this.subscription?.unsubscribe();
      this.onDone();
    };
  }

  private append({ index, event }: IndexedEvent): void {
    if (this.ending !== undefined) return;
    // The log's indexes are its readers' ids: an event out of its place would give them wrong ones.
    if (index !== this.log.length)
      return this.end({ error: new Error(`event ${index} came where ${this.log.length} was due`) });
    const logged = this.log.append(event);
    if (logged) this.bytes += Buffer.byteLength(logged.line);
    if (this.bytes > this.maxBytes) this.overflow();
  }

  /** Past the bound: it stops, takes no one more, and sends each reader on alone, the log let go with them. */
  private overflow(): void {
    this.ending = new Overflowed();
    this.subscription?.unsubscribe();
    this.onDone();
    for (const reader of [...this.readers]) reader.error(this.ending);
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
    else subscriber.error(ending instanceof Overflowed ? ending : ending.error);
  }
}

/**
 * The runs being read in this hub process, one shared reading each: the
 * first reader of a run opens it (one consumer on the broker, one read of a
 * file), the readers after it join it at their own place, and it closes with
 * its last reader, or, once its run has ended, is kept a while (`KeptReadings`)
 * for the readers who come after. Its log keeps the run's events while anyone reads it, up
 * to `maxBytes` of JSONL; each reader takes them at its own pace, a slow one
 * pausing only itself. Past `maxBytes` the reading closes and each of its
 * readers goes on alone from the event after the last it was given, as a
 * reader of a run too large to share reads it from the start.
 */
export class SharedReadings {
  private readonly readings = new Map<string, SharedReading>();

  constructor(
    /** The run's events after an index, as one reader reads them alone; a shared reading opens it from the first. */
    private readonly open: OpenReading,
    /** Bytes of JSONL a shared reading holds before its readers go on alone. */
    private readonly maxBytes = SHARED_READ_BYTES,
    /** Where the readings of runs that ended wait for their next readers: the hub's, shared by all its runs. */
    private readonly kept = new KeptReadings(maxBytes),
  ) {}

  /** The run's events after index `after`: from the reading of the run this process shares, then alone if it overflows. */
  follow(id: string, after: number, flow: FlowControl | undefined): Observable<IndexedEvent> {
    return defer(() => {
      let last = after;
      return this.shared$(id, after, flow).pipe(
        tap(({ index }) => (last = index)),
        catchError((err: unknown) => (err instanceof Overflowed ? this.open(id, last, flow) : throwError(() => err))),
      );
    });
  }

  /** Whether a reader of the run would join a reading open now: the run is known, no lookup needed. */
  reading(id: string): boolean {
    return this.readings.get(id)?.joinable ?? false;
  }

  /** The run's events after `after` from its shared reading, joined or opened; errors with `Overflowed` past the bound. */
  private shared$(id: string, after: number, flow: FlowControl | undefined): Observable<IndexedEvent> {
    return new Observable<IndexedEvent>((subscriber) => {
      let reading = this.readings.get(id);
      if (!reading?.joinable) {
        const made: SharedReading = new SharedReading(
          this.open(id, -1, undefined),
          this.maxBytes,
          () => {
            if (this.readings.get(id) === made) this.readings.delete(id);
          },
          this.kept,
        );
        this.readings.set(id, made);
        reading = made;
      }
      return reading.read(after, flow, subscriber);
    });
  }
}
