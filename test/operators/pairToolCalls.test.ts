import { describe, expect, it } from 'vitest';
import { lastValueFrom, Subject, toArray } from 'rxjs';
import type { EvoEvent } from '../../index.js';
import { pairToolCalls, type ToolInvocation } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const c1 = ev.toolCall('read_file', {}, { id: 'c1' });
const c1full = ev.toolCall('read_file', { path: 'a.md' }, { id: 'c1' });
const c2 = ev.toolCall('execute', { cmd: 'python x.py' }, { id: 'c2' });
const r1 = ev.toolResult('read_file', 'text of a.md', { id: 'c1' });
const r2 = ev.toolResult('execute', 'Traceback…', { id: 'c2', success: false });

/** The documented key: the JSON of `[instanceId, subagent, id]`, `null` where absent; an id-less call counts instead of an id. */
const key = (id: string | number, subagent?: string, instanceId?: string) =>
  JSON.stringify([instanceId ?? null, subagent ?? null, id]);

const running = (call: typeof c1, startedAt: number): ToolInvocation => ({
  key: key(call.id),
  id: call.id,
  name: call.name,
  args: call.args,
  status: 'running',
  callEvent: call,
  startedAt,
});

describe('pairToolCalls', () => {
  it('emits on first sight, on new args, on the result; ignores re-sends of finished calls', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: c1, A: c1full, b: c2, r: r1, s: r2, t: ev.text('x') };
      const source = cold<EvoEvent>('-a-b-A-A-r-t-A-b-s-|', values);
      const a = running(c1, 1);
      const b = running(c2, 3);
      const A = { ...a, args: c1full.args, callEvent: c1full };
      const expected = {
        a,
        b,
        A,
        r: { ...A, status: 'succeeded', result: 'text of a.md', success: true, resultEvent: r1, endedAt: 9 },
        s: { ...b, status: 'failed', result: 'Traceback…', success: false, resultEvent: r2, endedAt: 17 },
      };
      expectObservable(source.pipe(pairToolCalls())).toBe('-a-b-A---r-------s-|', expected);
      expectSubscriptions(source.subscriptions).toBe('^------------------!');
    });
  });

  it('emits the calls still open as unfinished when the source completes', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-a-b-r--|', { a: c1, b: c2, r: r1 });
      const a = running(c1, 1);
      const b = running(c2, 3);
      expectObservable(source.pipe(pairToolCalls())).toBe('-a-b-r--(u|)', {
        a,
        b,
        r: { ...a, status: 'succeeded', result: 'text of a.md', success: true, resultEvent: r1, endedAt: 5 },
        u: { ...b, status: 'unfinished', endedAt: 8 },
      });
    });
  });

  it('completes empty on an empty source', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('---|').pipe(pairToolCalls())).toBe('---|');
    });
  });

  it('passes errors on without inventing unfinished snapshots', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-a--#', { a: c1 }, new Error('exit 1'));
      expectObservable(source.pipe(pairToolCalls())).toBe('-a--#', { a: running(c1, 1) }, new Error('exit 1'));
    });
  });

  it('unsubscribes from the source when unsubscribed early, and emits nothing more', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-a-b-r-|', { a: c1, b: c2, r: r1 });
      expectObservable(source.pipe(pairToolCalls()), '^--!').toBe('-a--', { a: running(c1, 1) });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('closes the oldest open call of the same name for a result without an id', () => {
    marbles().run(({ cold, expectObservable }) => {
      const x = ev.toolCall('read_file', { path: 'x' }, { id: '' });
      const y = ev.toolCall('read_file', { path: 'y' }, { id: '' });
      const z = ev.toolCall('ls', {}, { id: '' });
      const rx = ev.toolResult('read_file', 'X');
      const ry = ev.toolResult('read_file', 'Y', { id: '' });
      const source = cold<EvoEvent>('xyzpq|', { x, y, z, p: rx, q: ry });
      const inv = (call: typeof x, n: number, at: number): ToolInvocation => ({ ...running(call, at), key: key(n) });
      const X = inv(x, 1, 0);
      const Y = inv(y, 2, 1);
      const Z = inv(z, 3, 2);
      expectObservable(source.pipe(pairToolCalls())).toBe('xyzpq(u|)', {
        x: X,
        y: Y,
        z: Z,
        p: { ...X, status: 'succeeded', result: 'X', success: true, resultEvent: rx, endedAt: 3 },
        q: { ...Y, status: 'succeeded', result: 'Y', success: true, resultEvent: ry, endedAt: 4 },
        u: { ...Z, status: 'unfinished', endedAt: 5 },
      });
    });
  });

  it('pairs sub-agent calls within their sub-agent and marks them', () => {
    marbles().run(({ cold, expectObservable }) => {
      const s = ev.subagentToolCall('research-agent', 'search', { q: 'x' }, { id: 's1' });
      const m = ev.toolCall('search', { q: 'main' }, { id: 's1' });
      const r = ev.subagentToolResult('research-agent', 'search', 'found');
      const source = cold<EvoEvent>('smr|', { s, m, r });
      const S: ToolInvocation = {
        ...running(s as never, 0),
        key: key('s1', 'research-agent'),
        subagent: 'research-agent',
        callEvent: s,
      };
      const M = running(m, 1);
      expectObservable(source.pipe(pairToolCalls())).toBe('smr(u|)', {
        s: S,
        m: M,
        r: { ...S, status: 'succeeded', result: 'found', success: true, resultEvent: r, endedAt: 2 },
        u: { ...M, status: 'unfinished', endedAt: 3 },
      });
    });
  });

  it('reports a result whose call was never seen, once', () => {
    marbles().run(({ cold, expectObservable }) => {
      const r = ev.toolResult('ls', 'a b', { id: 'ghost' });
      expectObservable(cold<EvoEvent>('rr|', { r }).pipe(pairToolCalls())).toBe('r-|', {
        r: {
          key: key('ghost'),
          id: 'ghost',
          name: 'ls',
          args: {},
          status: 'succeeded',
          result: 'a b',
          success: true,
          resultEvent: r,
          startedAt: 0,
          endedAt: 0,
        },
      });
    });
  });

  it('keeps no state between subscriptions', async () => {
    const source = new Subject<EvoEvent>();
    const paired = source.pipe(pairToolCalls());
    const first = lastValueFrom(paired.pipe(toArray()));
    source.next(c1);
    source.next(r1);
    source.complete();
    const again = lastValueFrom(paired.pipe(toArray()));
    expect((await first).map((i) => i.status)).toEqual(['running', 'succeeded']);
    expect(await again).toEqual([]);
  });

  it('produces one invocation per call under the producer’s quadratic re-sends', async () => {
    const n = 300;
    const stream: EvoEvent[] = [];
    for (let i = 0; i < n; i++) {
      stream.push(ev.toolCall('step', {}, { id: `c${i}` }));
      for (let j = 0; j <= i; j++) stream.push(ev.toolCall('step', { i: j }, { id: `c${j}` }));
      stream.push(ev.toolResult('step', `ok ${i}`, { id: `c${i}` }));
    }
    const { from } = await import('rxjs');
    const snapshots = await lastValueFrom(from(stream).pipe(pairToolCalls(), toArray()));
    // first sight, complete args, result: three snapshots per call, whatever the re-sends.
    expect(snapshots).toHaveLength(3 * n);
    const final = snapshots.filter((s) => s.status !== 'running');
    expect(final.map((s) => [s.key, s.args, s.result])).toEqual(
      Array.from({ length: n }, (_, i) => [key(`c${i}`), { i }, `ok ${i}`]),
    );
  });
});
