// The dashboard's run log: each reader a place in one log, a slow one paused there rather than copied.
import { lastValueFrom, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { FlowControl, fromJsonl, toJsonl, toJsonlStream } from '../../src/index.js';
import { RunLog } from '../../examples/web/runLog.js';
import { events as ev } from '../../testing/index.js';

/** Text deltas of about 200 bytes of JSONL each. */
const deltas = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ev.text(`${from + i} ${'x'.repeat(180)}`));

describe('a run log', () => {
  it('hands a reader 64 KiB behind no more than that, and the rest, in order, as it reads on', async () => {
    const log = new RunLog();
    const written = deltas(5_000);
    for (const event of written.slice(0, 2_500)) log.append(event);
    let handed = 0;
    const stream = toJsonlStream((flow) => log.read(flow).pipe(tap(() => handed++)));
    const reader = stream.getReader();
    await reader.read();
    for (const event of written.slice(2_500)) log.append(event);
    log.complete();
    // 64 KiB of 200-byte lines waiting for the reader, not the 1 MB the log holds.
    const line = toJsonl(written[0]!).length;
    expect(handed).toBeLessThan((64 * 1024) / line + 10);
    reader.releaseLock();
    const rest = await lastValueFrom(fromJsonl(stream).pipe(toArray()));
    expect(handed).toBe(5_000);
    expect(rest).toEqual(written.slice(5_000 - rest.length));
    expect(rest.length).toBeGreaterThan(4_000);
  });

  it('gives a reader who comes after the end every event, then completes', async () => {
    const log = new RunLog();
    const written = deltas(300);
    for (const event of written) log.append(event);
    log.complete();
    expect(await lastValueFrom(log.read(new FlowControl()).pipe(toArray()))).toEqual(written);
    expect(log.beingRead).toBe(false);
    // An ended log takes no more: every reader has read the run as the next one will.
    log.append(ev.text('late'));
    expect(await lastValueFrom(log.read(new FlowControl()).pipe(toArray()))).toEqual(written);
  });

  it('holds a paused reader where it is and goes on when it resumes, with events appended meanwhile', async () => {
    const log = new RunLog();
    const flow = new FlowControl();
    const seen: unknown[] = [];
    let completed = false;
    const reading = log.read(flow).subscribe({ next: (e) => seen.push(e), complete: () => (completed = true) });
    log.append(ev.text('a'));
    flow.pause();
    log.append(ev.text('b'));
    log.complete();
    expect([seen, completed]).toEqual([[ev.text('a')], false]);
    flow.resume();
    expect([seen, completed]).toEqual([[ev.text('a'), ev.text('b')], true]);
    expect(reading.closed).toBe(true);
  });

  it('stops handing on when its reader leaves, and is no longer read', () => {
    const log = new RunLog();
    const seen: unknown[] = [];
    const reading = log.read(new FlowControl()).subscribe((e) => seen.push(e));
    log.append(ev.text('a'));
    expect(log.beingRead).toBe(true);
    reading.unsubscribe();
    log.append(ev.text('b'));
    expect([seen, log.beingRead]).toEqual([[ev.text('a')], false]);
  });
});
