import { concat, interval, map, NEVER, Observable, of, take, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { eachEvent, run } from '../../index.js';
import { schedulerClock } from '../../src/process/clock.js';
import { runIn } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { marbles } from '../support/marbles.js';
import { virtualCli } from '../support/virtualCli.js';

const text = (content: string) => JSON.stringify({ type: 'text', content });

describe('eachEvent', () => {
  it('yields every value in order and ends with the source', async () => {
    const seen: number[] = [];
    for await (const value of eachEvent(of(1, 2, 3))) seen.push(value);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('throws the source error after its last value', async () => {
    const seen: number[] = [];
    const loop = async () => {
      for await (const value of eachEvent(
        concat(
          of(1, 2),
          throwError(() => new Error('broken')),
        ),
      ))
        seen.push(value);
    };
    await expect(loop()).rejects.toThrow('broken');
    expect(seen).toEqual([1, 2]);
  });

  it('subscribes only when iterated, and unsubscribes when the loop is left', async () => {
    let subscribed = 0;
    let unsubscribed = 0;
    const source$ = new Observable<number>((subscriber) => {
      subscribed++;
      subscriber.next(1);
      subscriber.next(2);
      return () => unsubscribed++;
    });
    const events = eachEvent(source$);
    expect(subscribed).toBe(0);
    for await (const value of events) if (value === 1) break;
    expect([subscribed, unsubscribed]).toEqual([1, 1]);
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('refuses a high-water mark that is not a positive integer', () => {
    expect(() => eachEvent(NEVER, { highWaterMark: 0 })).toThrow(/highWaterMark/);
    expect(() => eachEvent(NEVER, { highWaterMark: 1.5 })).toThrow(/highWaterMark/);
  });

  it('pauses the source when the consumer is highWaterMark behind, and resumes it at half', async () => {
    const changes: [number, boolean][] = [];
    let produced = 0;
    const events = eachEvent(
      (flow) => {
        flow.watch((paused) => changes.push([produced, paused]));
        return interval(0).pipe(
          take(20),
          map(() => ++produced),
        );
      },
      { highWaterMark: 4 },
    );
    const first = await events.next();
    expect(first).toEqual({ done: false, value: 1 });
    // Let the source run ahead of a consumer that reads nothing more.
    while (produced < 6) await new Promise((resolve) => setImmediate(resolve));
    expect(changes[0]).toEqual([5, true]);
    const rest: number[] = [];
    for await (const value of events) rest.push(value);
    expect(rest).toEqual(Array.from({ length: 19 }, (_, i) => i + 2));
    expect(changes.some(([, paused]) => !paused)).toBe(true);
  });
});

describe('eachEvent over run()', () => {
  it('pauses and resumes the CLI output as the consumer falls behind and catches up', async () => {
    const scheduler = marbles();
    const { startCli, log } = virtualCli({
      stdout: Array.from({ length: 10 }, (_, i) => [i, text(String(i))] as const),
      exit: [20, 0],
    });
    const events = eachEvent((flow) => runIn({ clock: schedulerClock(scheduler), startCli }, { prompt: 'p', flow }), {
      highWaterMark: 3,
    });
    const first = events.next();
    scheduler.flush();
    expect((await first).value).toMatchObject({ type: 'text', content: '0' });
    expect(log.pauses[0]).toEqual([2, 'pause']);
    const contents: string[] = [];
    await expect(
      (async () => {
        for await (const event of events) contents.push((event as { content: string }).content);
      })(),
    ).rejects.toThrow(/without a done event/);
    expect(contents).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(log.pauses.some(([, what]) => what === 'resume')).toBe(true);
  });

  it('keeps memory bounded while a slow consumer reads a CLI that writes 1 GB', async () => {
    const { command, env } = fakeEvoSci([
      { bigLine: 1 << 20, count: 1024 },
      { lines: [JSON.stringify({ type: 'done', content: '', response: '' })] },
    ]);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    let results = 0;
    for await (const event of eachEvent((flow) => run({ prompt: 'p', command, env, flow }), { highWaterMark: 8 })) {
      if (event.type === 'tool_result') results++;
      // A consumer slower than the pipe: each event waits for a turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 5));
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    expect(results).toBe(1024);
    // 1 GiB went through; held at any time: 8 events and one read of 1 MiB lines.
    expect(peak - baseline).toBeLessThan(256 * 1024 * 1024);
    // A gigabyte through JSON.parse takes seconds alone, and minutes on a machine running other suites.
  }, 180_000);
});
