import { from, lastValueFrom, map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { runChanges, summarize, type RunChange, type SummaryChange } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { fromJsonl } from '../../src/index.js';
import { fixtureBytes } from '../support/collect.js';
import { marbles } from '../support/marbles.js';

const values = {
  t: ev.text('hi'),
  c: ev.toolCall('ls', { path: '.' }, { id: 'c1' }),
  r: ev.toolResult('ls', 'a b', { id: 'c1' }),
  s: ev.subagentStart('code-agent', { instanceId: 'task:k', toolCallId: 'k' }),
  x: ev.subagentEnd('code-agent', { instanceId: 'task:k' }),
  u: ev.usage(1, 2),
  d: ev.done('hi!'),
};

/** What a change is about, short enough for a marble. */
function short(change: RunChange | SummaryChange): string {
  switch (change.kind) {
    case 'invocation':
      return `${change.invocation.name}:${change.invocation.status}`;
    case 'delegation-start':
    case 'delegation-end':
      return `${change.kind}:${change.delegation.key}`;
    case 'summary':
      return `summary:${change.summary.outcome}`;
    default:
      return change.kind;
  }
}

describe('runChanges', () => {
  it('emits each change as its event comes, then the summary at completion', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-t-c-r-s-x-u-d-|', values);
      expectObservable(source.pipe(runChanges(), map(short))).toBe('-a-b-c-d-e-f-g-(h|)', {
        a: 'text',
        b: 'ls:running',
        c: 'ls:succeeded',
        d: 'delegation-start:task:k',
        e: 'delegation-end:task:k',
        f: 'usage',
        g: 'done',
        h: 'summary:completed',
      });
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('gives an empty run only its summary', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('--|').pipe(runChanges(), map(short))).toBe('--(a|)', {
        a: 'summary:incomplete',
      });
    });
  });

  it('passes an error on, with no closing changes and no summary', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-#', values, new Error('killed'));
      expectObservable(source.pipe(runChanges(), map(short))).toBe('-a-#', { a: 'ls:running' }, new Error('killed'));
    });
  });

  it('unsubscribes from the run when unsubscribed early, and emits nothing more', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-t-c-r-|', values);
      expectObservable(source.pipe(runChanges(), map(short)), '^--!').toBe('-a--', { a: 'text' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('closes what is still open when the run completes, calls before delegations, then summarizes', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-s-|', values);
      expectObservable(source.pipe(runChanges(), map(short))).toBe('-a-b-(cde|)', {
        a: 'ls:running',
        b: 'delegation-start:task:k',
        c: 'ls:unfinished',
        d: 'delegation-end:task:k',
        e: 'summary:incomplete',
      });
    });
  });

  it("ends with the summary summarize() gives, and its changes' last invocation states are the summary's", async () => {
    const events = await lastValueFrom(fromJsonl(fixtureBytes('research-run.jsonl')).pipe(toArray()));
    const scheduler = marbles();
    const changes = await lastValueFrom(from(events).pipe(runChanges({ scheduler }), toArray()));
    const summary = await lastValueFrom(from(events).pipe(summarize({ scheduler })));
    const last = changes.at(-1);
    expect(last).toEqual({ kind: 'summary', summary });
    const latest = new Map<string, string>();
    for (const c of changes) if (c.kind === 'invocation') latest.set(c.invocation.key, c.invocation.status);
    expect([...latest]).toEqual(summary.invocations.map((i) => [i.key, i.status]));
    expect(changes.filter((c) => c.kind === 'delegation-start')).toHaveLength(summary.delegations.length);
  });
});
