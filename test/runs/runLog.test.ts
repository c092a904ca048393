// A run's log: each reader a place in one log, a slow one paused there rather than copied.
import { lastValueFrom, map, tap, toArray } from 'rxjs';
import type { Subscriber } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { FlowControl, fromJsonl, toJsonl, toJsonlStream } from '../../src/index.js';
import { RunLog } from '../../src/runs/RunLog.js';
import type { IndexedEvent } from '../../src/runs/wire.js';
import { events as ev } from '../../testing/index.js';

/** Text deltas of about 200 bytes of JSONL each. */
const deltas = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ev.text(`${from + i} ${'x'.repeat(180)}`));

/** How a reader ends once it has read an ended log: here, it completes. */
const complete = (subscriber: Subscriber<IndexedEvent>) => subscriber.complete();

/** The events a reader from the first event reads, without their indexes. */
const readAll = (log: RunLog) =>
  lastValueFrom(
    log.read(-1, new FlowControl(), complete).pipe(
      map(({ event }) => event),
      toArray(),
    ),
  );

describe('a run log', () => {
  it('hands a reader 64 KiB behind no more than that, and the rest, in order, as it reads on', async () => {
    const log = new RunLog();
    const written = deltas(5_000);
    for (const event of written.slice(0, 2_500)) log.append(event);
    let handed = 0;
    const stream = toJsonlStream((flow) =>
      log.read(-1, flow, complete).pipe(
        map(({ event }) => event),
        tap(() => handed++),
      ),
    );
    const reader = stream.getReader();
    await reader.read();
    for (const event of written.slice(2_500)) log.append(event);
    log.end();
    // 64 KiB of 200-byte lines waiting for the reader, not the 1 MB the log holds.
    const line = toJsonl(written[0]!).length;
    expect(handed).toBeLessThan((64 * 1024) / line + 10);
    reader.releaseLock();
    const rest = await lastValueFrom(fromJsonl(stream).pipe(toArray()));
    expect(handed).toBe(5_000);
    expect(rest).toEqual(written.slice(5_000 - rest.length));
    expect(rest.length).toBeGreaterThan(4_000);
  });

  it('gives a reader who comes after the end every event with its index, then ends it as told', async () => {
    const log = new RunLog();
    const written = deltas(300);
    for (const event of written) log.append(event);
    log.end();
    expect(await readAll(log)).toEqual(written);
    expect(log.beingRead).toBe(false);
    const after = await lastValueFrom(log.read(297, undefined, complete).pipe(toArray()));
    expect(after).toEqual([
      { index: 298, event: written[298] },
      { index: 299, event: written[299] },
    ]);
    // An ended log takes no more: every reader has read the run as the next one will.
    log.append(ev.text('late'));
    expect(await readAll(log)).toEqual(written);
    const failed = log.read(-1, undefined, (subscriber) => subscriber.error(new Error('the run failed')));
    await expect(lastValueFrom(failed)).rejects.toThrow('the run failed');
  });

  it('holds a paused reader where it is and goes on when it resumes, with events appended meanwhile', () => {
    const log = new RunLog();
    const flow = new FlowControl();
    const seen: unknown[] = [];
    let completed = false;
    const reading = log.read(-1, flow, complete).subscribe({
      next: ({ event }) => seen.push(event),
      complete: () => (completed = true),
    });
    log.append(ev.text('a'));
    flow.pause();
    log.append(ev.text('b'));
    log.end();
    expect([seen, completed]).toEqual([[ev.text('a')], false]);
    flow.resume();
    expect([seen, completed]).toEqual([[ev.text('a'), ev.text('b')], true]);
    expect(reading.closed).toBe(true);
  });

  it('stops handing on when its reader leaves, and is no longer read', () => {
    const log = new RunLog();
    const seen: unknown[] = [];
    const reading = log.read(-1, new FlowControl(), complete).subscribe(({ event }) => seen.push(event));
    log.append(ev.text('a'));
    expect(log.beingRead).toBe(true);
    reading.unsubscribe();
    log.append(ev.text('b'));
    expect([seen, log.beingRead]).toEqual([[ev.text('a')], false]);
  });
});
