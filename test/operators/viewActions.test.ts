import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, map, tap, toArray } from 'rxjs';
import type { EvoEvent } from '../../index.js';
import { viewActions, type ViewAction } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = {
  t: ev.text('hi'),
  u: ev.usage(1, 2),
  c: ev.toolCall('ls', { path: '.' }, { id: 'c1' }),
  r: ev.toolResult('ls', 'a b', { id: 'c1' }),
  s: ev.subagentStart('code-agent', { instanceId: 'task:k', toolCallId: 'k' }),
  x: ev.subagentEnd('code-agent', { instanceId: 'task:k' }),
  d: ev.done('hi!'),
};

/** What each action is about, short enough for a marble. */
const describe1 = (a: ViewAction): string => {
  switch (a.kind) {
    case 'tool':
      return `tool:${a.invocation.name}:${a.invocation.status}`;
    case 'subagent-end':
      return `end:${a.events}`;
    default:
      return a.kind;
  }
};

describe('viewActions', () => {
  it('emits the changes a view shows as the events come, and the summary at completion', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-t-c-r-s-x-u-d-|', values);
      expectObservable(source.pipe(viewActions(), map(describe1))).toBe('-a-b-c-d-e-f-g-(h|)', {
        a: 'text',
        b: 'tool:ls:running',
        c: 'tool:ls:succeeded',
        d: 'subagent-start',
        e: 'end:0',
        f: 'usage',
        g: 'text',
        h: 'summary',
      });
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('gives an empty run zero usage and a summary, and nothing else', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('--|').pipe(viewActions(), map(describe1))).toBe('--(ab|)', {
        a: 'usage',
        b: 'summary',
      });
    });
  });

  it('passes an error on, with no summary and no unfinished snapshots', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-#', values, new Error('killed'));
      expectObservable(source.pipe(viewActions(), map(describe1))).toBe(
        '-a-#',
        { a: 'tool:ls:running' },
        new Error('killed'),
      );
    });
  });

  it('unsubscribes from the run when unsubscribed early, and emits nothing more', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-t-c-r-|', values);
      expectObservable(source.pipe(viewActions(), map(describe1)), '^--!').toBe('-a--', { a: 'text' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('closes what is still open when the run completes: the call unfinished, the sub-agent ended with its count', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-s-|', values);
      expectObservable(source.pipe(viewActions(), map(describe1))).toBe('-a-b-(cdef|)', {
        a: 'tool:ls:running',
        b: 'subagent-start',
        c: 'tool:ls:unfinished',
        d: 'end:0',
        e: 'usage',
        f: 'summary',
      });
    });
  });

  it('ties an approval that names no agent to the sub-agent call it asks about', async () => {
    const paused = ev.subagentToolCall(
      'code-agent',
      'execute',
      { command: 'make', lr: NaN },
      { id: 'call_0', instanceId: 'task:k' },
    );
    const run = [
      ev.toolCall('task', { subagent_type: 'code-agent', description: 'build' }, { id: 'k' }),
      values.s,
      paused,
      ev.interrupt('i1', [{ name: 'execute', args: { command: 'make', lr: NaN } }]),
      ev.done(''),
    ];
    const tools = await lastValueFrom(
      from(run).pipe(
        viewActions(),
        map((a) => (a.kind === 'tool' ? `${a.delegation ? 'sub' : 'main'}:${a.invocation.status}` : undefined)),
        toArray(),
      ),
    );
    expect(tools.filter((t) => t !== undefined)).toEqual(['sub:running', 'sub:awaiting-input']);
  });

  it("closes a sub-agent's open call with it, in its delegation, and completes a late subscriber's events$ at once", async () => {
    const call = ev.subagentToolCall('code-agent', 'execute', { command: 'make' }, { id: 'c0', instanceId: 'task:k' });
    const run = [values.s, call, values.x, values.d];
    const lateEnds: boolean[] = [];
    const actions = await lastValueFrom(
      from(run).pipe(
        viewActions(),
        tap((a) => {
          // Subscribed after its end, while the run goes on: it must not wait for the run.
          if (a.kind !== 'subagent-end') return;
          let ended = false;
          a.delegation.events$.subscribe({ complete: () => (ended = true) });
          lateEnds.push(ended);
        }),
        toArray(),
      ),
    );
    expect(
      actions.map((a) => (a.kind === 'tool' ? `${a.delegation?.key ?? 'main'}:${a.invocation.status}` : a.kind)),
    ).toEqual(['subagent-start', 'task:k:running', 'task:k:unfinished', 'subagent-end', 'text', 'usage', 'summary']);
    expect(lateEnds).toEqual([true]);
  });
});
