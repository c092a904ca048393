// followRun against a real HTTP server playing a run hub's event stream:
// resuming after cuts, each event once and in order, every way a run or a
// stream ends, refusals, retries and their bound, unsubscribing.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, tap } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CancelledError,
  DecodeError,
  DecodeIssue,
  EvoSciError,
  ExitError,
  followRun,
  FollowGaveUpError,
  ForgottenRunError,
  RunHubError,
  RunRestartedError,
  UnknownRunError,
  type FollowRunOptions,
  type RunRestart,
} from '../../src/index.js';
import type { IndexedEvent } from '../../src/runs/wire.js';
import { events as ev } from '../../testing/events.js';
import { collect, diagnostics } from '../support/collect.js';
import { progressSigns, sseRunServer, type SseRunScript, type SseRunServer } from '../support/sseRunServer.js';

/** The data of `count` events as a hub writes them: text deltas, then `done`. */
function runEvents(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify(i === count - 1 ? ev.done(`answer ${i}`) : ev.text(`piece ${i} `)),
  );
}

const FAST: FollowRunOptions = { retryDelayMs: 0 };

/** The `error` event a hub sends a reader of a run its worker lost, started again as `attempt`. */
const restartInfo = (attempt: number) => {
  const { name, message } = new RunRestartedError('run-1', attempt);
  return { name, message };
};

let server: SseRunServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: SseRunScript): Promise<SseRunServer> {
  server = await sseRunServer(script);
  return server;
}

const indexes = (got: IndexedEvent[]) => got.map((e) => e.index);
const lastEventIds = (s: SseRunServer) => s.requests.map((r) => r.lastEventId);

/*
 * A client may drop what it had not read when its connection fails (a web
 * stream's queue is emptied when it errors): a cut whose resume a test
 * asserts waits for the client's sign that it has the events before it.
 */

describe('followRun', () => {
  it('emits a whole run as indexed events, then completes, having asked for an event stream', async () => {
    const data = runEvents(5);
    const s = await serve({ events: data });
    const got = await collect(followRun(s.url, { headers: { authorization: 'Bearer t0ken' } }));
    expect(got).toEqual(data.map((json, index) => ({ index, event: JSON.parse(json) })));
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.headers).toMatchObject({ accept: 'text/event-stream', authorization: 'Bearer t0ken' });
    expect(s.requests[0]!.lastEventId).toBeUndefined();
  });

  it('resumes after each of three cuts with the last index it has: every event once, in order', async () => {
    const progress = progressSigns();
    const answers = [
      { cutAfter: 2, cutWhen: progress.reached(1) },
      { cutAfter: 3, cutWhen: progress.reached(4) },
      { cutAfter: 1, cutWhen: progress.reached(5) },
    ];
    const s = await serve({ events: runEvents(10), answers });
    const got = await collect(followRun(new URL(s.url), FAST).pipe(tap((e) => progress.report(e.index))));
    expect(indexes(got)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(lastEventIds(s)).toEqual([undefined, '1', '4', '5']);
  });

  it('drops the events a hub sends again, and errors when indexes jump', async () => {
    const again = await serve({ events: runEvents(6), answers: [{ cutAfter: 3 }, { startAt: 0 }] });
    expect(indexes(await collect(followRun(again.url, FAST)))).toEqual([0, 1, 2, 3, 4, 5]);
    await again.close();
    const progress = progressSigns();
    const gap = await serve({
      events: runEvents(6),
      answers: [{ cutAfter: 2, cutWhen: progress.reached(1) }, { startAt: 4 }],
    });
    const follow$ = followRun(gap.url, FAST).pipe(tap((e) => progress.report(e.index)));
    await expect(collect(follow$)).rejects.toThrow('event 4 came after event 1');
    expect(gap.requests).toHaveLength(2);
  });

  it('starts after `after`, sending it as Last-Event-ID', async () => {
    const s = await serve({ events: runEvents(6) });
    expect(indexes(await collect(followRun(s.url, { after: 3 })))).toEqual([4, 5]);
    expect(lastEventIds(s)).toEqual(['3']);
  });

  it('errors with the ExitError of a failed run, its message and exit code, after its events', async () => {
    const error = { name: 'ExitError', message: 'EvoSci exited with code 1', exitCode: 1 };
    const s = await serve({ events: runEvents(3), ending: { end: { state: 'failed', error } } });
    const seen: number[] = [];
    const failure = await new Promise((resolve) =>
      followRun(s.url).subscribe({ next: (e) => seen.push(e.index), error: resolve }),
    );
    expect(seen).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(ExitError);
    expect(failure).toMatchObject({ message: 'EvoSci exited with code 1', exitCode: 1 });
  });

  it('errors with CancelledError for a cancelled run, and says so for an end it cannot read', async () => {
    const end = { state: 'cancelled', error: { name: 'CancelledError', message: 'the run was cancelled' } } as const;
    const cancelled = await serve({ events: runEvents(2), ending: { end } });
    await expect(collect(followRun(cancelled.url))).rejects.toBeInstanceOf(CancelledError);
    await cancelled.close();
    const odd = await serve({ events: runEvents(2), ending: { end: { state: 'exploded' } as never } });
    await expect(collect(followRun(odd.url))).rejects.toThrow(/end event is not a RunEnd/);
  });

  it("errors with the name and message of the hub's error event, without reconnecting", async () => {
    const info = { name: 'ForgottenRunError', message: 'run run-1 ended and is no longer kept' };
    const s = await serve({ events: runEvents(3), ending: { error: info } });
    const failure = await collect(followRun(s.url, FAST)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ForgottenRunError);
    expect(failure).toMatchObject({ ...info, status: 410, id: 'run-1' });
    expect(s.requests).toHaveLength(1);
    await s.close();
    // A name this library has no class of: an Error of that name.
    const odd = { name: 'BrokerError', message: 'the broker went away' };
    const other = await serve({ events: runEvents(1), ending: { error: odd } });
    const failed = await collect(followRun(other.url, FAST)).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(RunHubError);
    expect(failed).toMatchObject(odd);
  });

  it('errors with the RunRestartedError of a run started again on another worker: its class, status and attempt', async () => {
    const s = await serve({ events: runEvents(3), ending: { error: restartInfo(2) } });
    const seen: number[] = [];
    const failure = await new Promise((resolve) =>
      followRun(s.url, FAST).subscribe({ next: (e) => seen.push(e.index), error: resolve }),
    );
    expect(seen).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(RunRestartedError);
    expect(failure).toMatchObject({ ...restartInfo(2), status: 409, attempt: 2, id: 'run-1' });
    expect(s.requests).toHaveLength(1);
  });

  it("with onRestart: 'refollow', tells of a restart, then reads the new attempt from its start", async () => {
    const second = runEvents(4).map((json) => json.replace('piece', 'again'));
    const answers = [{ ending: { error: restartInfo(2) } }, { events: second }];
    const s = await serve({ events: runEvents(3), answers });
    const got = await collect(followRun(s.url, { ...FAST, onRestart: 'refollow' }));
    const shown = got.map((item) => ('restarted' in item ? `restart ${item.restarted.attempt}` : item.index));
    expect(shown).toEqual([0, 1, 2, 'restart 2', 0, 1, 2, 3]);
    const restart = got[3] as RunRestart;
    expect(restart.restarted).toBeInstanceOf(RunRestartedError);
    expect(got.slice(4)).toEqual(second.map((json, index) => ({ index, event: JSON.parse(json) })));
    // The new attempt is read from its start: no Last-Event-ID.
    expect(lastEventIds(s)).toEqual([undefined, undefined]);
  });

  it('ends with the RunRestartedError when the hub names the same attempt again', async () => {
    const s = await serve({ events: runEvents(1), ending: { error: restartInfo(2) } });
    const got: (IndexedEvent | RunRestart)[] = [];
    const failure = await new Promise((resolve) =>
      followRun(s.url, { ...FAST, onRestart: 'refollow' }).subscribe({
        next: (item) => got.push(item),
        error: resolve,
      }),
    );
    expect(failure).toBeInstanceOf(RunRestartedError);
    expect(got.map((item) => ('restarted' in item ? 'restart' : item.index))).toEqual([0, 'restart', 0]);
    expect(s.requests).toHaveLength(2);
  });

  it('types its values by onRestart: events only, unless a restart may come', () => {
    const url = 'http://x/runs/a/events';
    const events$: Observable<IndexedEvent> = followRun(url, { onRestart: 'error' });
    // @ts-expect-error: a refollowing follower emits a RunRestart too
    const narrowed$: Observable<IndexedEvent> = followRun(url, { onRestart: 'refollow' });
    const either$: Observable<IndexedEvent | RunRestart> = followRun(url, { onRestart: 'refollow' });
    expect([events$, narrowed$, either$].every((o) => o instanceof Observable)).toBe(true);
  });

  it('errors with UnknownRunError on 404 and ForgottenRunError on 410, without retrying', async () => {
    const s = await serve({ events: runEvents(2), answers: [{ status: 410 }] });
    await expect(collect(followRun(`${s.origin}/runs/nope/events`, FAST))).rejects.toBeInstanceOf(UnknownRunError);
    await expect(collect(followRun(s.url, FAST))).rejects.toBeInstanceOf(ForgottenRunError);
    expect(s.requests).toHaveLength(1);
  });

  it('errors with a RunHubError of the status and message of any other refusal, without retrying', async () => {
    const s = await serve({ events: runEvents(2), answers: [{ status: 401, body: '{"error":"a token is needed"}' }] });
    const failure = await collect(followRun(s.url, FAST)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RunHubError);
    expect(failure).toMatchObject({ status: 401, message: 'a token is needed' });
    expect(s.requests).toHaveLength(1);
  });

  it('retries a 503 and a 429, then follows', async () => {
    const s = await serve({ events: runEvents(3), answers: [{ status: 503 }, { status: 429 }] });
    expect(indexes(await collect(followRun(s.url, FAST)))).toEqual([0, 1, 2]);
    expect(s.requests).toHaveLength(3);
  });

  it('gives up once maxRetries connections in a row failed, naming the last refusal or the lost connection', async () => {
    const busy = { status: 503, body: '{"error":"the run hub is closed"}' };
    const refused = await serve({ events: runEvents(3), answers: [busy, busy, busy, busy] });
    const failure = await collect(followRun(refused.url, { ...FAST, maxRetries: 2 })).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(FollowGaveUpError);
    expect(failure).toMatchObject({ tries: 3, url: refused.url });
    expect((failure as Error).message).toMatch(/after 3 tries in a row .*; the last: 503 the run hub is closed$/);
    expect((failure as Error).cause).toBeInstanceOf(RunHubError);
    expect((failure as Error).cause).toMatchObject({ status: 503, message: 'the run hub is closed' });
    expect(refused.requests).toHaveLength(3);
    await refused.close();
    // A cut before any event counts; one after a new event starts the count again.
    const progress = progressSigns();
    const answers = [
      { cutAfter: 1, cutWhen: progress.reached(0) },
      { cutAfter: 0 },
      { cutAfter: 1, cutWhen: progress.reached(1) },
      { cutAfter: 0 },
      { cutAfter: 0 },
      { cutAfter: 0 },
    ];
    const dropping = await serve({ events: runEvents(9), answers });
    const seen: number[] = [];
    const lost = await new Promise((resolve) =>
      followRun(dropping.url, { ...FAST, maxRetries: 2 }).subscribe({
        next: (e) => {
          seen.push(e.index);
          progress.report(e.index);
        },
        error: resolve,
      }),
    );
    expect(lost).toBeInstanceOf(FollowGaveUpError);
    expect((lost as Error).message).toMatch(/the last: lost the connection: /);
    expect((lost as Error).cause).toBeInstanceOf(EvoSciError);
    expect(seen).toEqual([0, 1]);
    expect(lastEventIds(dropping)).toEqual([undefined, '0', '0', '1', '1']);
  });

  it('retries a fetch that rejects, through the fetch of its options', async () => {
    const s = await serve({ events: runEvents(3) });
    let calls = 0;
    const flaky: typeof fetch = (input, init) =>
      ++calls <= 2 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init);
    expect(indexes(await collect(followRun(s.url, { ...FAST, fetch: flaky })))).toEqual([0, 1, 2]);
    expect(calls).toBe(3);
  });

  it("waits as long as the server's retry: field says, not its own delay", async () => {
    // Were the hour-long option waited, this test would time out.
    const s = await serve({ events: runEvents(4), retryMs: 1, answers: [{ cutAfter: 2 }] });
    expect(indexes(await collect(followRun(s.url, { retryDelayMs: 3_600_000 })))).toEqual([0, 1, 2, 3]);
  }, 20_000);

  it('errors on a 2xx answer that is no event stream', async () => {
    const s = await serve({ events: [], answers: [{ status: 200, body: '[]', contentType: 'application/json' }] });
    await expect(collect(followRun(s.url, FAST))).rejects.toThrow(/not text\/event-stream/);
    expect(s.requests).toHaveLength(1);
  });

  it('takes a connection that sends nothing for idleTimeoutMs, not even a heartbeat, for lost, and resumes', async () => {
    const s = await serve({ events: runEvents(4), answers: [{ silentAfter: 2 }] });
    const got = await collect(followRun(s.url, { ...FAST, idleTimeoutMs: 300 }));
    expect(indexes(got)).toEqual([0, 1, 2, 3]);
    expect(lastEventIds(s)).toEqual([undefined, '1']);
    await s.requests[0]!.aborted;
  });

  it('gives up a request unanswered for idleTimeoutMs, and asks again', async () => {
    const s = await serve({ events: runEvents(3), answers: ['unanswered'] });
    const got = await collect(followRun(s.url, { ...FAST, idleTimeoutMs: 300 }));
    expect(indexes(got)).toEqual([0, 1, 2]);
    expect(s.requests).toHaveLength(2);
    await s.requests[0]!.aborted;
  });

  it('aborts the request when unsubscribed mid-run', async () => {
    const s = await serve({ events: runEvents(3), ending: 'open' });
    const seen: number[] = [];
    let third!: () => void;
    const thirdSeen = new Promise<void>((resolve) => (third = resolve));
    const subscription = followRun(s.url).subscribe((e) => {
      seen.push(e.index);
      if (seen.length === 3) third();
    });
    await thirdSeen;
    subscription.unsubscribe();
    await s.requests[0]!.aborted;
    expect(seen).toEqual([0, 1, 2]);
  });

  it('reports a malformed event to onDiagnostic with its index, and goes on; strict makes it a DecodeError', async () => {
    const data = runEvents(4);
    data[2] = '{"type":"text","content":';
    const progress = progressSigns();
    const s = await serve({ events: data, answers: [{ cutAfter: 3, cutWhen: progress.reached(2) }] });
    const issues: DecodeIssue[] = [];
    const onDiagnostic = (issue: DecodeIssue) => {
      issues.push(issue);
      progress.report(issue.line);
    };
    expect(indexes(await collect(followRun(s.url, { ...FAST, onDiagnostic })))).toEqual([0, 1, 3]);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toBeInstanceOf(DecodeIssue);
    expect(issues[0]).toMatchObject({ line: 2, raw: data[2] });
    // The bad event counts as had: the resume names it, and it is reported once.
    expect(lastEventIds(s)).toEqual([undefined, '2']);
    const failure = await collect(followRun(s.url, { strict: true })).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DecodeError);
    expect((failure as DecodeError).issue.line).toBe(2);
  });

  it('passes events of an unknown type with keepUnknown, and skips them without', async () => {
    const data = runEvents(3);
    data[1] = '{"type":"from_the_future","x":1}';
    const s = await serve({ events: data });
    expect(indexes(await collect(followRun(s.url)))).toEqual([0, 2]);
    const kept = await collect(followRun(s.url, { keepUnknown: true }));
    expect(kept[1]).toMatchObject({ index: 1, event: { type: 'unknown', event: { type: 'from_the_future' } } });
  });

  it('reports an event over maxLineBytes and drops it, holding no more than the limit of it', async () => {
    const data = runEvents(4);
    data[1] = JSON.stringify(ev.text('x'.repeat(2000)));
    // Far larger than a socket read: the parser's bound is passed before the event ends, and the follower resumes past it.
    data[2] = JSON.stringify(ev.text('y'.repeat(1_000_000)));
    const s = await serve({ events: data });
    const { issues, onDiagnostic } = diagnostics();
    const got = await collect(followRun(s.url, { ...FAST, maxLineBytes: 1000, onDiagnostic }));
    expect(indexes(got)).toEqual([0, 3]);
    expect(issues.map((issue) => [issue.line, issue.message])).toEqual([
      [1, 'event longer than maxLineBytes (1000); dropped'],
      [2, 'event longer than maxLineBytes (1000); dropped'],
    ]);
    expect(lastEventIds(s).at(-1)).toBe('2');
  });

  it('retries a server that sends an oversized message on every connection only as often as maxRetries allows', async () => {
    // A hostile hub: every connection gets the start of a message that never ends within any sane limit.
    let connections = 0;
    const hostile = createServer((_req, res) => {
      // A follower that never gives up would connect for ever: past 30 connections the run is gone.
      if (++connections > 30) return void res.writeHead(404).end('{"error":"gone"}');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${'x'.repeat(64 * 1024)}`);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/runs/run-1/events`;
      const { issues, onDiagnostic } = diagnostics();
      const options = { ...FAST, maxLineBytes: 1000, maxRetries: 3, onDiagnostic };
      const failure = await collect(followRun(url, options)).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(FollowGaveUpError);
      expect((failure as Error).message).toMatch(/longer than/);
      // The first connection, then maxRetries more: each oversized message is a failed connection.
      expect(connections).toBe(4);
      expect(failure).toMatchObject({ tries: 4 });
      expect(issues).toHaveLength(4);
    } finally {
      hostile.closeAllConnections();
      await new Promise((resolve) => hostile.close(resolve));
    }
  });

  it('completes on a 204 answer to a reconnection, and takes an id on the end and error events', async () => {
    const progress = progressSigns();
    const answers = [
      { cutAfter: 3, cutWhen: progress.reached(2) },
      { status: 204, body: '' },
    ];
    const nothingMore = await serve({ events: runEvents(5), answers });
    const got = await collect(followRun(nothingMore.url, FAST).pipe(tap((e) => progress.report(e.index))));
    expect(indexes(got)).toEqual([0, 1, 2]);
    expect(lastEventIds(nothingMore)).toEqual([undefined, '2']);
    await nothingMore.close();
    // A hub gives its last event the run's event count as id: past every index, and no event.
    const counted = await serve({ events: runEvents(3), ending: { end: { state: 'completed' }, id: '3' } });
    expect(indexes(await collect(followRun(counted.url)))).toEqual([0, 1, 2]);
    await counted.close();
    const info = { name: 'ForgottenRunError', message: 'run run-1 ended and is no longer kept' };
    const failed = await serve({ events: runEvents(2), ending: { error: info, id: '2' } });
    await expect(collect(followRun(failed.url))).rejects.toMatchObject(info);
  });

  it('refuses wrong options where it is called', () => {
    expect(() => followRun('http://x/runs/a/events', { maxRetries: -1 })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { retryDelayMs: NaN })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { after: 1.5 })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { maxLineBytes: 0 })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { giveUpAfterMs: 0 })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { maxRetryDelayMs: -1 })).toThrow(TypeError);
    expect(() => followRun('http://x/runs/a/events', { onRestart: 'again' as 'error' })).toThrow(TypeError);
  });
});
