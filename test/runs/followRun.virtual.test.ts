// followRun's delays in virtual time, over a fake `fetch` that plays a hub:
// when each connection is made, whatever failed before it, and how long a
// server's `retry:` may make the follower wait. No wall clock is raced.
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { followRunIn, MAX_SERVER_RETRY_MS, type FollowRunOptions } from '../../src/runs/followRun.js';
import type { IndexedEvent } from '../../src/runs/wire.js';
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

/** Follows the fake hub in virtual time until the follow ends: what came and how it ended. */
async function follow(scheduler: VirtualTimeScheduler, fetch: typeof globalThis.fetch, options: FollowRunOptions) {
  const got: IndexedEvent[] = [];
  const ending: { completed?: true; error?: unknown } = {};
  followRunIn({ scheduler }, URL, { ...options, fetch }).subscribe({
    next: (e) => got.push(e),
    complete: () => (ending.completed = true),
    error: (error: unknown) => (ending.error = error),
  });
  await runTimers(scheduler, () => ending.completed === true || 'error' in ending);
  return { indexes: got.map((e) => e.index), ...ending };
}

/** A message far past `maxLineBytes`, in chunks as a socket delivers it: the parser's bound is passed before it ends. */
const oversized = ['data: ', ...Array<string>(10).fill('x'.repeat(1000)), '\n\n'];

/** A connection that fails, one way each: every one must wait the delay and count. */
const failures: [string, Answer][] = [
  ['a refused connection', () => Promise.reject(new TypeError('fetch failed'))],
  ['a 503', () => new Response('{"error":"busy"}', { status: 503 })],
  ['an oversized message', () => new Response(body(oversized), { headers: SSE })],
  ['a body that ends without end', () => new Response(body([': heartbeat\n\n']), { headers: SSE })],
  ['a body that breaks', () => new Response(body([': heartbeat\n\n'], true), { headers: SSE })],
  ['a body that goes silent', () => new Response(new ReadableStream(), { headers: SSE })],
];

describe('followRun in virtual time', () => {
  it.each(failures)('waits retryDelayMs after %s, and gives up after maxRetries of them', async (_, answer) => {
    const scheduler = new VirtualTimeScheduler();
    const { fetch, calls } = fakeHub(scheduler, [answer]);
    const options = { retryDelayMs: 1000, maxRetries: 3, maxLineBytes: 1000, idleTimeoutMs: 500 };
    const { indexes, error } = await follow(scheduler, fetch, options);
    expect(indexes).toEqual([]);
    expect(error).toBeInstanceOf(Error);
    // A silent body is given up after idleTimeoutMs, then the delay runs.
    const step = answer === failures[5]![1] ? 1500 : 1000;
    expect(calls).toEqual([0, step, 2 * step, 3 * step]);
  });

  it("waits at most MAX_SERVER_RETRY_MS however long a server's retry: asks, and ignores one that is no number", async () => {
    expect(MAX_SERVER_RETRY_MS).toBe(60_000);
    const scheduler = new VirtualTimeScheduler();
    const first = `retry: 2000000000\n\nretry: -5\n\nretry: soon\n\n${frame(0, ev.text('a'))}`;
    const { fetch, calls } = fakeHub(scheduler, [
      () => new Response(body([first]), { headers: SSE }),
      () => new Response(body([frame(1, ev.done('a')), END]), { headers: SSE }),
    ]);
    const { indexes, completed } = await follow(scheduler, fetch, { retryDelayMs: 1000 });
    expect(indexes).toEqual([0, 1]);
    expect(completed).toBe(true);
    expect(calls).toEqual([0, 60_000]);
  });
});
