import { concat, defer, EMPTY, throwError, type Observable, type Subscriber, type Subscription } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import type { FlowControl } from '../common/FlowControl.js';
import { run, type ExitInfo, type RunOptions } from '../process/run.js';
import { RunInterruptedError } from './errors.js';
import { cancelledError, errorOfStatus, runEndOf } from './runEnd.js';
import { RunLog } from './RunLog.js';
import type { KeptReadings } from './KeptReadings.js';
import { SHARED_READ_BYTES, SharedReadings } from './SharedReadings.js';
import type { EventSink, RunStore, StoredRun } from './RunStore.js';
import type { EndState, IndexedEvent, RunStatus } from './wire.js';

/** What a run tells its hub. */
export interface RunHooks {
  /** The run has ended and its process is gone: it may be forgotten now. */
  onSettled(run: LocalRun): void;
  /** The store could not keep the run's events or status; the run's log stays in memory. */
  onStoreError(error: unknown, id: string): void;
}

/**
 * Where a run's process is, for its end to be written only once none of it can exist:
 * - `unborn`: not begun; a run that ends now never starts one;
 * - `spawning`: its `run()` being subscribed: whether a process started is known once that returns;
 * - `running`: its process reported its pid, and has not exited;
 * - `gone`: none is left and none will start (it exited, could not start, or the run never began).
 */
type ProcessPhase = 'unborn' | 'spawning' | 'running' | 'gone';

/**
 * One run of a hub in this process: the hub is the only subscriber of its
 * `run()`, so every reader and the cancel act on the same process. Its
 * events go to its log (read by every reader from its own place) and to its
 * store; once the store holds them all, a durable store serves the readers
 * who come later, and the log is let go.
 */
export class LocalRun {
  /** Its status, changed in place as the run goes (a store writes what it holds when it writes). */
  private readonly stored: StoredRun;
  private log: RunLog | undefined;
  /** Where its events are stored, opened as it begins: a run found in the store, or one that never began, holds no file open. */
  private sink: EventSink | undefined;
  /** Its `run()`, made when it is prepared; none for a run found in the store. */
  private readonly events$: Observable<EvoEvent | UnknownEvent> | undefined;
  private subscription: Subscription | undefined;
  private phase: ProcessPhase = 'unborn';
  /** Resolves once `phase` is `gone`. */
  private readonly exited: Promise<void>;
  private markExited!: () => void;
  private logBytes = 0;
  /** Its readers from the store: one reading of its events shared by those who read at once, kept a while after. */
  private readonly fromStore: SharedReadings;
  /** The writes of its record, one after another (the first, its start's, its end's): the last made is the last written. */
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    stored: StoredRun,
    private readonly store: RunStore,
    private readonly hooks: RunHooks,
    options: RunOptions | undefined,
    kept: KeptReadings,
  ) {
    this.stored = stored;
    const open = (_: string, after: number, flow: FlowControl | undefined) => store.read(stored.status, after, flow);
    this.fromStore = new SharedReadings(open, SHARED_READ_BYTES, kept);
    // First: options that `run()` refuses are refused before the run is recorded or a file opened.
    this.events$ = options && this.runOf(options);
    this.log = store.durable && stored.status.state !== 'running' ? undefined : new RunLog();
    this.exited = new Promise<void>((resolve) => (this.markExited = resolve));
  }

  /**
   * A new run, to `record`, then `begin`; throws the `TypeError` of options
   * `run()` does not take. `kept` is the hub's: where the readings of its
   * runs that ended wait for their next readers.
   */
  static prepare(
    stored: StoredRun,
    store: RunStore,
    hooks: RunHooks,
    options: RunOptions,
    kept: KeptReadings,
  ): LocalRun {
    return new LocalRun(stored, store, hooks, options, kept);
  }

  /** A run found in the store when the hub opened: ended, its events in the store. */
  static stored(stored: StoredRun, store: RunStore, hooks: RunHooks, kept: KeptReadings): LocalRun {
    const found = new LocalRun(stored, store, hooks, undefined, kept);
    found.goneNow();
    return found;
  }

  get id(): string {
    return this.stored.status.id;
  }

  /** A copy of its status as it is now. */
  get status(): RunStatus {
    return { ...this.stored.status };
  }

  get key(): { readonly idempotencyKey?: string; readonly fingerprint?: string } {
    return this.stored;
  }

  get ended(): boolean {
    const { state } = this.stored.status;
    return state !== 'running' && state !== 'queued';
  }

  /** Ended, its process gone and its end stored: only then may it be forgotten. */
  get settled(): boolean {
    return this.ended && this.phase === 'gone';
  }

  /** The size of its events as JSONL: in the store when it holds them, else in the log. */
  get bytes(): number {
    return this.log === undefined ? this.store.bytes(this.id) : this.logBytes;
  }

  /** Its events after index `after`, then its end: completes if it completed, else errors with its error. */
  follow(after: number, flow: FlowControl | undefined): Observable<IndexedEvent> {
    const log = this.log;
    if (log) return log.read(after, flow, (subscriber) => this.endReader(subscriber));
    // A run of a size to hold is read once for the readers who read it at once; a larger one, by each alone.
    const shared = this.store.bytes(this.id) <= SHARED_READ_BYTES;
    return concat(
      shared ? this.fromStore.follow(this.id, after, flow) : this.store.read(this.stored.status, after, flow),
      defer(() => {
        const error = errorOfStatus(this.stored.status);
        return error ? throwError(() => error) : EMPTY;
      }),
    );
  }

  /**
   * Stops the run, if it is going, and resolves once its process is gone and
   * its end stored. A run that has ended is left as it is, its process too
   * (it may be saving its memory after `done`).
   */
  async cancel(): Promise<RunStatus> {
    if (this.ended) return this.status;
    this.stop('cancelled', cancelledError(this.id, this.phase === 'unborn' ? 'queued' : 'running'));
    await this.exited;
    await this.saving;
    return this.status;
  }

  /** Stops the run because the hub is closing: it did not end of itself, so it was interrupted. */
  async interrupt(): Promise<void> {
    this.stop('interrupted', new RunInterruptedError(`run ${this.id} was interrupted: its hub closed`));
    await this.exited;
    await this.saving;
  }

  private stop(state: EndState, error: Error): void {
    if (this.ended) return;
    this.subscription?.unsubscribe();
    this.end(state, error);
  }

  /** Saves its first record; the writes of its end queue behind it. */
  record(): Promise<void> {
    const first = this.store.save(this.stored);
    this.saving = first.catch(() => undefined);
    return first;
  }

  /** Starts the run, unless it was stopped while its record was saved: subscribes to its `run()`. */
  begin(): void {
    if (this.phase !== 'unborn' || this.events$ === undefined) return;
    this.phase = 'spawning';
    this.sink = this.store.events(this.id);
    const subscription = this.events$.subscribe({
      next: (event) => this.append(event),
      error: (err: unknown) => this.end(runEndOf(err).state, err),
      complete: () => this.end('completed', undefined),
    });
    this.subscription = subscription;
    // Stopped as it spawned (an onSpawn of the app's cancelled it): its process is stopped now.
    if (this.ended) subscription.unsubscribe();
    // No pid reported: no process started (it could not, or the run's stand-in has none).
    if (this.phase === 'spawning') this.goneNow();
  }

  private runOf(options: RunOptions): Observable<EvoEvent | UnknownEvent> {
    return run({
      ...options,
      onSpawn: (pid) => {
        if (this.phase === 'spawning') this.phase = 'running';
        this.stored.status.startedAt = new Date().toISOString();
        // Stored now: a hub that dies before the run ends still says when it started.
        this.saveStatus();
        options.onSpawn?.(pid);
      },
      onExit: (info) => this.onExit(info, options),
    });
  }

  private goneNow(): void {
    this.phase = 'gone';
    this.markExited();
  }

  private append(event: EvoEvent | UnknownEvent): void {
    this.sink?.append(event);
    this.stored.status.events++;
    const logged = this.log?.append(event);
    // Counted by the line a JSONL reader is sent, made here once for them all.
    if (logged && !this.store.durable) this.logBytes += Buffer.byteLength(logged.line);
  }

  private onExit(info: ExitInfo, options: RunOptions): void {
    if (info.threadId !== undefined) this.stored.status.threadId = info.threadId;
    this.goneNow();
    options.onExit?.(info);
    // A run that ended before its process exited is saved again, with the thread its exit reported.
    if (this.ended) this.saveEnd();
  }

  private end(state: EndState, error: unknown): void {
    if (this.ended) return;
    const status = this.stored.status;
    const ending = runEndOf(error);
    status.state = state;
    status.endedAt = new Date().toISOString();
    if (ending.error) status.error = ending.error;
    // Ended before it began: it never starts, so there is no exit to wait for.
    if (this.phase === 'unborn') this.goneNow();
    this.log?.end();
    this.saveEnd();
  }

  /** Stores its status as it is now, after the writes before. */
  private saveStatus(): void {
    this.saving = this.saving.then(() =>
      this.store.save(this.stored).catch((err: unknown) => this.hooks.onStoreError(err, this.id)),
    );
  }

  /** Stores the events, then the status that says the run ended; a durable store then serves later readers. */
  private saveEnd(): void {
    this.saving = this.saving.then(() => this.writeEnd());
  }

  private async writeEnd(): Promise<void> {
    try {
      await this.sink?.close();
      await this.store.save(this.stored);
      if (this.store.durable) this.log = undefined;
    } catch (err) {
      this.hooks.onStoreError(err, this.id);
    }
    if (this.settled) this.hooks.onSettled(this);
  }

  private endReader(subscriber: Subscriber<IndexedEvent>): void {
    const error = errorOfStatus(this.stored.status);
    if (error) subscriber.error(error);
    else subscriber.complete();
  }
}
