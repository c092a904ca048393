// The readers of a run a directory hub serves from its file share one
// reading of it: each reader gets every event after its place once and in
// order, whatever the others do, and the file is read once for them all.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import type { DecodeIssue } from '../../src/events/errors.js';
import { runHub, type IndexedEvent } from '../../src/runs/index.js';
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
