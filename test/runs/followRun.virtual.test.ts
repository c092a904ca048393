// followRun's delays in virtual time, over a fake `fetch` that plays a hub:
// when each connection is made, whatever failed before it, and how long a
// server's `retry:` may make the follower wait. No wall clock is raced.
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { MAX_SERVER_RETRY_MS } from '../../src/runs/backoff.js';
import { followRunIn, type FollowRunOptions } from '../../src/runs/followRun.js';
import { FollowGaveUpError } from '../../src/runs/Outage.js';
import { events as ev } from '../../testing/events.js';
import { runTimers } from '../support/virtualTime.js';

const URL = 'http://hub.test/runs/run-1/events';
const SSE = { 'content-type': 'text/event-stream' };

/** The SSE frame of event `index`. */
const frame = (index: number, event: object) => `id: ${index}\ndata: ${JSON.stringify(event)}\n\n`;
const END = 'event: end\ndata: {"state":"completed"}\n\n';

/** A body of these chunks, then the end of the body; or, with `thenBreak`, a broken body. */
function body(chunks: readonly string[], thenBreak = false): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      if (thenBreak) controller.error(new TypeError('terminated'));
      else controller.close();
    },
  });
}

/** One answer of the fake hub: a response, or a rejection as `fetch` gives for a refused connection. */
type Answer = () => Response | Promise<never>;

/** The fake hub's answers in order (the last one again for every later call), the virtual time of each call. */
function fakeHub(scheduler: VirtualTimeScheduler, answers: readonly Answer[]) {
  const calls: number[] = [];
  const fetch: typeof globalThis.fetch = () => {
    calls.push(scheduler.now());
    // A follower that never stops would call for ever: past 50 calls the run is gone, which ends any follow.
    if (calls.length > 50) return Promise.resolve(new Response('{"error":"gone"}', { status: 404 }));
    return Promise.resolve(answers[Math.min(calls.length, answers.length) - 1]!());
  };
  return { fetch, calls };
}

/**
 * Follows the fake hub in virtual time until the follow ends: the indexes that
 * came (-1 for a restart), and how it ended. Each wait's share of its ceiling
 * is `random` (default one half).
 */
async function follow(
  scheduler: VirtualTimeScheduler,
  fetch: typeof globalThis.fetch,
  options: FollowRunOptions,
  random = () => 0.5,
) {
  const got: number[] = [];
  const ending: { completed?: true; error?: unknown } = {};
  followRunIn({ scheduler, random }, URL, { ...options, fetch }).subscribe({
    next: (e) => got.push('index' in e ? e.index : -1),
    complete: () => (ending.completed = true),
    error: (error: unknown) => (ending.error = error),
  });
  await runTimers(scheduler, () => ending.completed === true || 'error' in ending);
  return { indexes: got, ...ending };
}

/** The times of connections each of which fails `holdMs` after it is made, waiting half of each ceiling between. */
function halfBackoff(count: number, holdMs: number, baseMs: number, capMs = Infinity): number[] {
  const times = [0];
  for (let tries = 1; times.length < count; tries++) {
    times.push(times.at(-1)! + holdMs + Math.min(capMs, baseMs * 2 ** (tries - 1)) / 2);
  }
  return times;
}

const refused: Answer = () => Promise.reject(new TypeError('fetch failed'));
const sse = (chunks: readonly string[], thenBreak = false) => new Response(body(chunks, thenBreak), { headers: SSE });

const oversized = ['data: ', ...Array<string>(10).fill('x'.repeat(1000)), '\n\n'];

/** A connection that fails, one way each, and how long it takes to: every one must wait and count. */
const failures: [string, Answer, number][] = [
  ['a refused connection', refused, 0],
  ['a 503', () => new Response('{"error":"busy"}', { status: 503 }), 0],
  ['an oversized message', () => sse(oversized), 0],
  ['a body that ends without end', () => sse([': heartbeat\n\n']), 0],
  ['a body that breaks', () => sse([': heartbeat\n\n'], true), 0],
  // Given up after idleTimeoutMs.
  ['a body that goes silent', () => new Response(new ReadableStream(), { headers: SSE }), 500],
];

describe('followRun in virtual time', () => {
  it.each(failures)('backs off after %s, and gives up after maxRetries of them', async (_, answer, holdMs) => {
    const scheduler = new VirtualTimeScheduler();
    const { fetch, calls } = fakeHub(scheduler, [answer]);
    const options = { retryDelayMs: 1000, maxRetries: 3, maxLineBytes: 1000, idleTimeoutMs: 500 };
    const { indexes, error } = await follow(scheduler, fetch, options);
    expect(indexes).toEqual([]);
    expect(error).toBeInstanceOf(FollowGaveUpError);
    expect(error).toMatchObject({ tries: 4, url: URL });
    expect(calls).toEqual(halfBackoff(4, holdMs, 1000));
  });

  it('waits a random share of a ceiling that doubles from retryDelayMs up to maxRetryDelayMs', async () => {
    const scheduler = new VirtualTimeScheduler();
    const { fetch, calls } = fakeHub(scheduler, [refused]);
    const shares = [0.9, 0.1, 0.5, 0, 0.75, 0.2, 0.6, 0.3];
    const random = () => shares[(calls.length - 1) % shares.length]!;
    await follow(scheduler, fetch, { maxRetries: 8 }, random);
    const ceilings = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000];
    const waits = calls.slice(1).map((at, i) => at - calls[i]!);
    expect(waits).toEqual(ceilings.map((ceiling, i) => shares[i]! * ceiling));
  });

  it('gives up at giveUpAfterMs (default five minutes) without a connection, saying how many tries and how long', async () => {
    const scheduler = new VirtualTimeScheduler();
    const { fetch, calls } = fakeHub(scheduler, [refused]);
    const { error } = await follow(scheduler, fetch, {});
    // Half of 1, 2, 4, 8, 16 s, then 15 s a time; the last wait ends at the budget's end, where the last try is.
    const expected = halfBackoff(25, 0, 1000, 30_000).filter((at) => at < 300_000);
    expect(calls).toEqual([...expected, 300_000]);
    expect(error).toBeInstanceOf(FollowGaveUpError);
    expect(error).toMatchObject({ tries: calls.length, elapsedMs: 300_000 });
    expect((error as FollowGaveUpError).cause.cause).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      `followRun: gave up on ${URL} after ${calls.length} tries in a row and 5 min 0 s without a connection; ` +
        'the last: lost the connection: fetch failed',
    );
  });

  it('counts no time while a connection is up, and none before a new event', async () => {
    // A connection up for a minute, silent, between refusals: the budget runs before and after it, not during.
    const scheduler = new VirtualTimeScheduler();
    const silent = () => new Response(new ReadableStream(), { headers: SSE });
    const { fetch, calls } = fakeHub(scheduler, [refused, silent, refused]);
    const options = { giveUpAfterMs: 10_000, idleTimeoutMs: 60_000 };
    const { error } = await follow(scheduler, fetch, options);
    expect(calls).toEqual([0, 500, 61_500, 63_500, 67_500, 70_000]);
    expect(error).toMatchObject({ tries: 6, elapsedMs: 10_000 });
    // A new event ends the outage: the waits start again from retryDelayMs.
    const again = new VirtualTimeScheduler();
    const oneEvent = () => sse([frame(0, ev.text('a'))]);
    const hub = fakeHub(again, [refused, refused, oneEvent, refused]);
    const after = await follow(again, hub.fetch, { maxRetries: 2 });
    expect(after.indexes).toEqual([0]);
    expect(hub.calls).toEqual([0, 500, 1500, 2000, 3000]);
  });

  it("backs off from the server's retry:, held to MAX_SERVER_RETRY_MS; one that is no number changes nothing", async () => {
    expect(MAX_SERVER_RETRY_MS).toBe(60_000);
    const scheduler = new VirtualTimeScheduler();
    const first = `retry: 2000000000\n\nretry: -5\n\nretry: soon\n\n${frame(0, ev.text('a'))}`;
    const { fetch, calls } = fakeHub(scheduler, [() => sse([first]), () => sse([frame(1, ev.done('a')), END])]);
    const { indexes, completed } = await follow(scheduler, fetch, { retryDelayMs: 1000 });
    expect(indexes).toEqual([0, 1]);
    expect(completed).toBe(true);
    expect(calls).toEqual([0, 30_000]);
    // A sane retry: is the base the waits double from.
    const sane = new VirtualTimeScheduler();
    const hub = fakeHub(sane, [() => sse(['retry: 4000\n\n']), refused]);
    await follow(sane, hub.fetch, { retryDelayMs: 1000, maxRetries: 3 });
    expect(hub.calls).toEqual(halfBackoff(4, 0, 4000));
  });
});
