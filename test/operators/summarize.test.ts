import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const values = {
  k: ev.toolCall('task', { subagent_type: 'research-agent' }, 't1'),
  s: ev.subagentStart('research-agent', 'find'),
  x: ev.subagentText('research-agent', 'hm', 'i1'),
  c: ev.toolCall('ls', {}, 'c1'),
  r: ev.toolResult('ls', 'a b', { id: 'c1' }),
  C: ev.toolCall('execute', { command: 'make' }, 'c2'),
  R: ev.toolResult('execute', 'make: *** No rule', { id: 'c2', success: false }),
  e: ev.error('rate limited'),
  q: ev.askUser('int-1', [{ question: 'Which year?' }]),
  i: ev.interrupt('int-2', [{ name: 'execute' }]),
  u: ev.usage(10, 5),
  t: ev.text('Hel'),
  T: ev.text('lo'),
  d: ev.done('Hello.'),
  n: { type: 'heartbeat', n: 1 },
} satisfies Record<string, unknown>;

describe('summarize', () => {
  it('emits one summary of everything when the source completes', () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<EvoEvent>('-k-s-x-c-r-e-q-i-u-t-T-u-d-|', values as Record<string, EvoEvent>);
      const summary: RunSummary = {
        response: 'Hello.',
        text: 'Hello',
        usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
        invocations: [
          { key: 't1', id: 't1', name: 'task', args: values.k.args, status: 'unfinished', startedAt: 1, endedAt: 27 },
          { key: 'c1', id: 'c1', name: 'ls', args: {}, status: 'succeeded', startedAt: 7, endedAt: 9 },
        ],
        delegations: [
          { key: 't1', name: 'research-agent', description: 'find', taskCallId: 't1', events: 1, ended: false },
        ],
        errors: ['rate limited'],
        interrupts: [values.i],
        questions: [values.q],
        counts: {
          tool_call: 2,
          subagent_start: 1,
          subagent_text: 1,
          tool_result: 1,
          error: 1,
          ask_user: 1,
          interrupt: 1,
          usage_stats: 2,
          text: 2,
          done: 1,
        },
        events: 13,
      };
      expectObservable(source.pipe(summarize())).toBe('---------------------------(s|)', { s: summary });
      expectSubscriptions(source.subscriptions).toBe('^--------------------------!');
    });
  });

  it('keeps what went wrong for a failed invocation, and no output for the others', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-c-C-r-R-|', values as Record<string, EvoEvent>);
      expectObservable(source.pipe(summarize())).toBe('---------(s|)', {
        s: expect.objectContaining({
          invocations: [
            { key: 'c1', id: 'c1', name: 'ls', args: {}, status: 'succeeded', startedAt: 1, endedAt: 5 },
            {
              key: 'c2',
              id: 'c2',
              name: 'execute',
              args: { command: 'make' },
              status: 'failed',
              error: 'make: *** No rule',
              startedAt: 3,
              endedAt: 7,
            },
          ],
        }),
      });
    });
  });

  it('counts kept unknown events under their type', () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold<EvoEvent>('-n-|', values as Record<string, EvoEvent>);
      expectObservable(source.pipe(summarize())).toBe('---(s|)', {
        s: expect.objectContaining({ counts: { heartbeat: 1 }, events: 1 }),
      });
    });
  });

  it('summarizes an empty source', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('--|').pipe(summarize())).toBe('--(s|)', {
        s: {
          response: undefined,
          text: '',
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          invocations: [],
          delegations: [],
          errors: [],
          interrupts: [],
          questions: [],
          counts: {},
          events: 0,
        },
      });
    });
  });

  it('passes errors on and emits no summary', () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<EvoEvent>('-t-u-#', values as Record<string, EvoEvent>).pipe(summarize())).toBe('-----#');
    });
  });

  it('unsubscribes from the source when unsubscribed early and emits nothing', () => {
    marbles().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<EvoEvent>('-t-u-d-|', values as Record<string, EvoEvent>);
      expectObservable(source.pipe(summarize()), '^--!').toBe('----');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
