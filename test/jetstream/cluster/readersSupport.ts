// What the readers' cluster tests share: runs written live at a pace, and
// readers that record what they got, when they ended, and what they reported.
import type { NatsConnection } from '@nats-io/transport-node';
import { interval, lastValueFrom, map, take, type Observable, type Subscription } from 'rxjs';
import type { EvoEvent } from '../../../src/events/codecs.js';
import {
  fromJetStream,
  publishTo,
  watchRuns,
  type FromJetStreamOptions,
  type StatusRecord,
} from '../../../src/jetstream/index.js';

/** Asks until `ask` answers something defined: a sign awaited, not a time raced. */
export async function until<T>(ask: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await ask();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `count` text events, one every `periodMs`: a CLI writing as it goes. */
export function paced(count: number, periodMs: number): Observable<EvoEvent> {
  return interval(periodMs).pipe(
    take(count),
    map((i) => ({ type: 'text', content: `event ${i + 1} `.padEnd(120, '.') })),
  );
}

/** Writes a run as a worker does; resolves once its `finished` record is stored, at that time (`Date.now()`). */
export async function writeRun(
  nc: NatsConnection,
  prefix: string,
  runId: string,
  events$: Observable<EvoEvent>,
): Promise<number> {
  let finishedAt = 0;
  // Longer than a leader's election and a partition of the tests: the writer is not what they test.
  await lastValueFrom(
    events$.pipe(publishTo(nc, runId, { prefix, retryForMs: 90_000, onFinished: () => (finishedAt = Date.now()) })),
  );
  return finishedAt;
}

/** A reader of one run (`fromJetStream`) or of every status record (`watchRuns`), as it went. */
export class ReaderLog<T> {
  readonly items: T[] = [];
  readonly retries: string[] = [];
  error: Error | undefined;
  endedAt: number | undefined;
  readonly ended: Promise<void>;
  private subscription: Subscription | undefined;

  constructor(
    /** The run read; `undefined` for `watchRuns`. */
    readonly runId: string | undefined,
    source: (onRetrying: (e: Error) => void) => Observable<T>,
  ) {
    this.ended = new Promise<void>((resolve) => {
      this.subscription = source((e) => this.retries.push(e.message)).subscribe({
        next: (item) => this.items.push(item),
        error: (err: unknown) => {
          this.error = err as Error;
          this.endedAt = Date.now();
          resolve();
        },
        complete: () => {
          this.endedAt = Date.now();
          resolve();
        },
      });
    });
  }

  /** Resolves once `ok()` holds of what was read (polled: a sign, not a time), at that time; or once the reader ended. */
  async until(ok: (items: readonly T[]) => boolean): Promise<number> {
    while (!ok(this.items) && this.endedAt === undefined) await new Promise((r) => setTimeout(r, 50));
    return Date.now();
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }
}

/** A `fromJetStream` reader of `runId`. */
export function runReader(
  nc: NatsConnection,
  prefix: string,
  runId: string,
  options: FromJetStreamOptions = {},
): ReaderLog<EvoEvent> {
  return new ReaderLog(runId, (onRetrying) => fromJetStream(nc, runId, { ...options, prefix, onRetrying }));
}

/** A `watchRuns` reader from the stream's start. */
export function statusReader(nc: NatsConnection, prefix: string): ReaderLog<StatusRecord> {
  return new ReaderLog(undefined, (onRetrying) => watchRuns(nc, { prefix, from: 'start', onRetrying }));
}

/** Waits for every sign, for at most `withinMs`: readers still open after it are the ones that wait in silence. */
export async function settled(signs: readonly Promise<unknown>[], withinMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([Promise.all(signs), new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)))]);
  clearTimeout(timer);
}

/** The runs among `ids` whose `finished` record `records` holds, in the order of `ids`. */
export function finishedOf(records: readonly StatusRecord[], ids: readonly string[]): string[] {
  const ended = new Set(records.filter((r) => r.record === 'finished').map((r) => r.runId));
  return ids.filter((id) => ended.has(id));
}

/** What a reader was left with: its run, how many events it has, and its error, if any. */
export function describeReader(r: ReaderLog<unknown>): string {
  return `${r.runId ?? 'watchRuns'}: ${r.items.length} items${r.error ? `, ${r.error.message}` : ''}`;
}

/** `[min, median, max]` of some milliseconds, in seconds with one decimal, for a figure printed by a test. */
export function spread(ms: readonly number[]): string {
  const sorted = ms.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const s = (v: number | undefined) => (v === undefined ? '-' : (v / 1000).toFixed(1));
  return `min ${s(sorted[0])} s, median ${s(sorted[Math.floor(sorted.length / 2)])} s, max ${s(sorted.at(-1))} s`;
}
