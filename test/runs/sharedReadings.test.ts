// The readers of a run a directory hub serves from its file share one
// reading of it: each reader gets every event after its place once and in
// order, whatever the others do, and the file is read once for them all.
// A shared reading holds a bounded number of bytes: past it its readers go on
// alone from their own places and the shared one is let go.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defer, filter, finalize, lastValueFrom, ReplaySubject, toArray, type Observable } from 'rxjs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import type { DecodeIssue } from '../../src/events/errors.js';
import { runHub, type IndexedEvent } from '../../src/runs/index.js';
import { KeptReadings } from '../../src/runs/KeptReadings.js';
import { SharedReadings } from '../../src/runs/SharedReadings.js';
import { toJsonl } from '../../src/events/decode/jsonl.js';
import type { EvoEvent } from '../../src/events/codecs.js';
import { fakeEvoSci } from '../../testing/index.js';

const EVENTS = 30;
const lines = [
  ...Array.from({ length: EVENTS - 1 }, (_, i) => JSON.stringify({ type: 'text', content: `e${i} ` })),
  '{"type": "done", "content": "", "response": "r"}',
];
const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-shared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readers of a run in a directory', () => {
  it('share one reading of its file, each getting every event after its place once, in order', async () => {
    const writer = await runHub({ dir, runOptions: fakeEvoSci([{ lines }]) });
    const { id } = await writer.start({ prompt: 'shared' });
    await lastValueFrom(writer.follow(id));
    await writer.close();
    // A line the hub did not write: each reading of the file reports it once.
    appendFileSync(join(dir, `${id}.jsonl`), 'not json\n');
    // Opened again on the directory, the hub serves the run from its file.
    const issues: DecodeIssue[] = [];
    const hub = await runHub({ dir, onDiagnostic: (issue) => issues.push(issue) });
    // The first reader stops after three events, holding the reading open.
    const flow = new FlowControl();
    const first: IndexedEvent[] = [];
    let paused!: () => void;
    const stopped = new Promise<void>((resolve) => (paused = resolve));
    const firstDone = new Promise<void>((resolve, reject) =>
      hub.follow(id, { flow }).subscribe({
        next: (event) => {
          first.push(event);
          if (first.length === 3) {
            flow.pause();
            paused();
          }
        },
        complete: resolve,
        error: reject,
      }),
    );
    await stopped;
    const [fromStart, afterTen] = await Promise.all([
      lastValueFrom(hub.follow(id).pipe(toArray())),
      lastValueFrom(hub.follow(id, { after: 9 }).pipe(toArray())),
    ]);
    expect(first).toHaveLength(3);
    flow.resume();
    await firstDone;
    const all = Array.from({ length: EVENTS }, (_, i) => i);
    expect(first.map(({ index }) => index)).toEqual(all);
    expect(fromStart.map(({ index }) => index)).toEqual(all);
    expect(afterTen.map(({ index }) => index)).toEqual(all.slice(10));
    expect(fromStart[4]!.event).toEqual(JSON.parse(lines[4]!));
    expect(issues).toHaveLength(1);
    // A reader who comes after the others left joins the reading kept for it: the file is not read again.
    const later = await lastValueFrom(hub.follow(id, { after: 19 }).pipe(toArray()));
    expect(later.map(({ index }) => index)).toEqual(all.slice(20));
    expect(issues).toHaveLength(1);
    await hub.close();
  });
});

/** A run as a store holds it: every reading replays it from its first event, then follows it. */
class StoredRun {
  readonly events$ = new ReplaySubject<IndexedEvent>();
  /** Readings opened, and readings open now. */
  opened = 0;
  open = 0;

  read(after: number): Observable<IndexedEvent> {
    return defer(() => {
      this.opened++;
      this.open++;
      return this.events$.pipe(
        filter(({ index }) => index > after),
        finalize(() => this.open--),
      );
    });
  }

  emit(from: number, to: number): void {
    for (let index = from; index < to; index++) this.events$.next({ index, event: textEvent(index) });
  }
}

const textEvent = (i: number): EvoEvent => ({ type: 'text', content: `e${i} ` });

/** A reader's events, kept as they come, and its end. */
function collect(events$: Observable<IndexedEvent>) {
  const seen: number[] = [];
  const done = new Promise<void>((resolve, reject) =>
    events$.subscribe({ next: ({ index }) => seen.push(index), complete: resolve, error: reject }),
  );
  return { seen, done };
}

describe('a shared reading past its bound', () => {
  // Ten events fit; the eleventh passes the bound.
  const bound = Array.from({ length: 10 }, (_, i) => Buffer.byteLength(toJsonl(textEvent(i)))).reduce((a, b) => a + b);
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

  it('sends each reader on alone from its place and lets the shared reading go', async () => {
    const run = new StoredRun();
    const readings = new SharedReadings((_, after) => run.read(after), bound);
    // A reader that stops after three events, as an idle browser tab does, and two that keep up.
    const flow = new FlowControl();
    const idle = collect(readings.follow('r', -1, flow));
    const fromStart = collect(readings.follow('r', -1, undefined));
    const fromFive = collect(readings.follow('r', 4, undefined));
    run.emit(0, 3);
    flow.pause();
    run.emit(3, 8);
    expect([run.opened, run.open, readings.reading('r')]).toEqual([1, 1, true]);
    expect(idle.seen).toEqual(range(0, 3));
    // The eleventh event passes the bound: each reader reads alone, the shared reading is let go.
    run.emit(8, 15);
    expect([run.opened, run.open, readings.reading('r')]).toEqual([4, 3, false]);
    expect(fromStart.seen).toEqual(range(0, 15));
    // A reader who comes now opens a reading of its own, which passes the bound at once: it too reads alone.
    const late = collect(readings.follow('r', 12, undefined));
    expect([run.opened, run.open]).toEqual([6, 4]);
    run.emit(15, 20);
    run.events$.complete();
    flow.resume();
    await Promise.all([idle.done, fromStart.done, fromFive.done, late.done]);
    expect(idle.seen).toEqual(range(0, 20));
    expect(fromStart.seen).toEqual(range(0, 20));
    expect(fromFive.seen).toEqual(range(5, 20));
    expect(late.seen).toEqual(range(13, 20));
    expect(run.open).toBe(0);
  });

  it('gives each reader that went on alone the error of the run after its events', async () => {
    const run = new StoredRun();
    const readings = new SharedReadings((_, after) => run.read(after), bound);
    const readers = [collect(readings.follow('r', -1, undefined)), collect(readings.follow('r', 6, undefined))];
    run.emit(0, 12);
    const failure = new Error('the run failed');
    run.events$.error(failure);
    for (const { done } of readers) await expect(done).rejects.toBe(failure);
    expect(readers.map(({ seen }) => seen)).toEqual([range(0, 12), range(7, 12)]);
    expect([run.opened, run.open]).toEqual([3, 0]);
  });
});

describe('the reading of a run that ended', () => {
  const KEEP_MS = 1000;
  const bytesOf = (count: number) =>
    Array.from({ length: count }, (_, i) => Buffer.byteLength(toJsonl(textEvent(i)))).reduce((a, b) => a + b, 0);
  afterEach(() => void vi.useRealTimers());

  /** A run of `count` events that has ended, as a store holds it. */
  function endedRun(count: number): StoredRun {
    const run = new StoredRun();
    run.emit(0, count);
    run.events$.complete();
    return run;
  }

  it('is kept for the readers who come after the last left, then let go', async () => {
    vi.useFakeTimers();
    const run = endedRun(5);
    const readings = new SharedReadings((_, after) => run.read(after), 1 << 20, new KeptReadings(1 << 20, KEEP_MS));
    await collect(readings.follow('r', -1, undefined)).done;
    const second = collect(readings.follow('r', 2, undefined));
    await second.done;
    expect(second.seen).toEqual([3, 4]);
    expect([run.opened, readings.reading('r')]).toEqual([1, true]);
    // Each reader who comes takes it out for as long as it reads: the time starts again when it leaves.
    vi.advanceTimersByTime(KEEP_MS - 1);
    await collect(readings.follow('r', -1, undefined)).done;
    vi.advanceTimersByTime(KEEP_MS - 1);
    expect([run.opened, readings.reading('r')]).toEqual([1, true]);
    vi.advanceTimersByTime(1);
    expect(readings.reading('r')).toBe(false);
    const after = collect(readings.follow('r', -1, undefined));
    await after.done;
    expect(after.seen).toEqual([0, 1, 2, 3, 4]);
    expect(run.opened).toBe(2);
  });

  it('is not kept when its run failed, or when its last reader left before the run ended', async () => {
    const kept = new KeptReadings(1 << 20, KEEP_MS);
    const failed = new StoredRun();
    const failing = new SharedReadings((_, after) => failed.read(after), 1 << 20, kept);
    const reader = collect(failing.follow('f', -1, undefined));
    failed.emit(0, 2);
    failed.events$.error(new Error('the run failed'));
    await expect(reader.done).rejects.toThrow('the run failed');
    expect(failing.reading('f')).toBe(false);

    const live = new StoredRun();
    const following = new SharedReadings((_, after) => live.read(after), 1 << 20, kept);
    const subscription = following.follow('l', -1, undefined).subscribe();
    live.emit(0, 2);
    subscription.unsubscribe();
    // Its source stopped with its last reader: nothing holds a reading of a run that goes on.
    expect([live.open, following.reading('l'), kept.heldBytes]).toEqual([0, false, 0]);
  });

  it("is kept within the hub's bound in bytes, the oldest let go for a newer one", async () => {
    const kept = new KeptReadings(bytesOf(5) + bytesOf(3), KEEP_MS);
    const runs = { a: endedRun(5), b: endedRun(3), c: endedRun(4) };
    const readings = new SharedReadings((id, after) => runs[id as keyof typeof runs].read(after), 1 << 20, kept);
    for (const id of ['a', 'b'] as const) await collect(readings.follow(id, -1, undefined)).done;
    expect([readings.reading('a'), readings.reading('b'), kept.heldBytes]).toEqual([true, true, bytesOf(8)]);
    // Four events more do not fit beside five and three: the oldest, a, is let go.
    await collect(readings.follow('c', -1, undefined)).done;
    expect([readings.reading('a'), readings.reading('b'), readings.reading('c')]).toEqual([false, true, true]);
    expect(kept.heldBytes).toBe(bytesOf(3) + bytesOf(4));
    kept.clear();
    expect([readings.reading('b'), readings.reading('c'), kept.heldBytes]).toEqual([false, false, 0]);
  });
});
