import { describe, expectTypeOf, it } from 'vitest';
import { of, type Observable } from 'rxjs';
import type { EvoEvent, SubagentToolCallEvent, ToolCallEvent, UnknownEvent } from '../../index.js';
import { ofType } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = {
  t: ev.text('hi'),
  c: ev.toolCall('ls', {}, { id: 'c1' }),
  r: ev.toolResult('ls', 'ok', { id: 'c1' }),
  s: ev.subagentToolCall('research-agent', 'search', {}, { id: 's1' }),
  u: ev.usage(1, 2),
} satisfies Record<string, EvoEvent>;

describe('ofType', () => {
  it('lets through only the given types, in order', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-t-c-r-s-c-u-|', values);
      expectObservable(source.pipe(ofType('tool_call', 'subagent_tool_call'))).toBe('---c---s-c---|', values);
      expectSubscriptions(source.subscriptions).toBe('^------------!');
    });
  });

  it('completes empty on an empty source', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('|').pipe(ofType('text'))).toBe('|');
    });
  });

  it('passes errors on', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-t-c-#', values, new Error('boom')).pipe(ofType('text'))).toBe(
        '-t---#',
        values,
        new Error('boom'),
      );
    });
  });

  it('unsubscribes from the source when unsubscribed early', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-t-c-t-c-|', values);
      expectObservable(source.pipe(ofType('text')), '^--!').toBe('-t--', values);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('narrows the event type', () => {
    const calls$ = of<EvoEvent>(values.c).pipe(ofType('tool_call'));
    expectTypeOf(calls$).toEqualTypeOf<Observable<ToolCallEvent>>();
    const both$ = of<EvoEvent | UnknownEvent>(values.c).pipe(ofType('tool_call', 'subagent_tool_call'));
    expectTypeOf(both$).toEqualTypeOf<Observable<ToolCallEvent | SubagentToolCallEvent>>();
    // @ts-expect-error: not an event type
    of<EvoEvent>(values.c).pipe(ofType('tool_cal'));
  });
});
