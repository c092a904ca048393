// The readers of a run a directory hub serves from its file share one
// reading of it: each reader gets every event after its place once and in
// order, whatever the others do, and the file is read once for them all.
// A shared reading holds a bounded number of bytes: past it its readers go on
// alone from their own places and the shared one is let go.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defer, filter, finalize, lastValueFrom, ReplaySubject, toArray, type Observable } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import type { DecodeIssue } from '../../src/events/errors.js';
import { runHub, type IndexedEvent } from '../../src/runs/index.js';
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
