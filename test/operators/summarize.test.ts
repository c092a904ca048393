import { describe, expect, it } from 'vitest';
import { from, lastValueFrom } from 'rxjs';
import type { EvoEvent } from '../../index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { events as ev } from '../../testing/events.js';
import { marbles } from '../support/marbles.js';

const key = (id: string) => JSON.stringify([null, null, id]);

const values = {
  k: ev.toolCall('task', { subagent_type: 'research-agent' }, { id: 't1' }),
  s: ev.subagentStart('research-agent', { description: 'find' }),
  x: ev.subagentText('research-agent', 'hm', { instanceId: 'i1' }),
  c: ev.toolCall('ls', {}, { id: 'c1' }),
  r: ev.toolResult('ls', 'a b', { id: 'c1' }),
  C: ev.toolCall('execute', { command: 'make' }, { id: 'c2' }),
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
        outcome: 'failed',
        response: 'Hello.',
        text: 'Hello',
        usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
        invocations: [
          {
            key: key('t1'),
            id: 't1',
            name: 'task',
            args: values.k.args,
            status: 'unfinished',
            startedAt: 1,
            endedAt: 27,
          },
          { key: key('c1'), id: 'c1', name: 'ls', args: {}, status: 'succeeded', startedAt: 7, endedAt: 9 },
        ],
        delegations: [
          {
            key: 't1',
            instanceId: undefined,
            name: 'research-agent',
            subagentType: 'research-agent',
            description: 'find',
            taskCallId: 't1',
            events: 1,
            ended: false,
          },
        ],
        panelDispatches: [],
        errors: ['rate limited'],
        interrupts: [values.i],
        questions: [values.q],
        // The run went on after both: text and usage followed.
        pendingApprovals: [],
        pendingQuestions: [],
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
            { key: key('c1'), id: 'c1', name: 'ls', args: {}, status: 'succeeded', startedAt: 1, endedAt: 5 },
            {
              key: key('c2'),
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
          outcome: 'incomplete',
          response: undefined,
          text: '',
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          invocations: [],
          delegations: [],
          panelDispatches: [],
          errors: [],
          interrupts: [],
          questions: [],
          pendingApprovals: [],
          pendingQuestions: [],
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

  it('tells how the run ended: completed, needs-input, failed or incomplete', () => {
    const ask = ev.askUser('int-1', [{ question: 'Which year?', type: 'text' }], { toolCallId: 'c9' });
    const approval = ev.interrupt('int-2', [{ name: 'execute', args: { command: 'make' } }]);
    const cases: [string, Record<string, EvoEvent>, Partial<RunSummary>][] = [
      ['-t-d-|', { t: ev.text('ok'), d: ev.done('ok') }, { outcome: 'completed' }],
      [
        '-c-q-d-|',
        { c: ev.toolCall('ask_user', { q: 1 }, { id: 'c9' }), q: ask, d: ev.done('') },
        { outcome: 'needs-input', pendingQuestions: [ask], pendingApprovals: [] },
      ],
      [
        '-c-i-d-|',
        { c: ev.toolCall('execute', { command: 'make' }, { id: 'c3' }), i: approval, d: ev.done('') },
        { outcome: 'needs-input', pendingApprovals: [approval], pendingQuestions: [] },
      ],
      [
        '-q-r-t-d-|',
        { q: ask, r: ev.toolResult('ask_user', '1999', { id: 'c9' }), t: ev.text('ok'), d: ev.done('ok') },
        { outcome: 'completed', pendingQuestions: [] },
      ],
      ['-t-e-|', { t: ev.text('a'), e: ev.error('boom') }, { outcome: 'failed', errors: ['boom'] }],
      ['-t-|', { t: ev.text('a') }, { outcome: 'incomplete' }],
    ];
    for (const [marble, events, expected] of cases) {
      marbles().run(({ cold, expectObservable }) => {
        const frames = marble.length - 1;
        expectObservable(cold<EvoEvent>(marble, events).pipe(summarize())).toBe(`${'-'.repeat(frames)}(s|)`, {
          s: expect.objectContaining(expected),
        });
      });
    }
  });

  it('reports a call the run stopped to ask about as awaiting input, the others as unfinished', () => {
    marbles().run(({ cold, expectObservable }) => {
      const events = {
        a: ev.toolCall('ask_user', { questions: [] }, { id: 'c9' }),
        w: ev.toolCall('web_search', { q: 'x' }, { id: 'c8' }),
        q: ev.askUser('int-1', [{ question: 'Which?' }], { toolCallId: 'c9' }),
        d: ev.done(''),
      };
      expectObservable(cold<EvoEvent>('-a-w-q-d-|', events).pipe(summarize())).toBe('---------(s|)', {
        s: expect.objectContaining({
          outcome: 'needs-input',
          invocations: [
            expect.objectContaining({ id: 'c9', status: 'awaiting-input' }),
            expect.objectContaining({ id: 'c8', status: 'unfinished' }),
          ],
        }),
      });
    });
  });

  it('reports panel dispatches with their label, sub-agent type, duration and error', () => {
    marbles().run(({ cold, expectObservable }) => {
      const events = {
        a: ev.panelDispatchStart('p1', { evalId: 'c7', subagentType: 'research-agent', label: 'Reviewer 1' }),
        b: ev.panelDispatchStart('p2', { evalId: 'c7', subagentType: 'code-agent', label: 'Reviewer 2' }),
        A: ev.panelDispatchComplete('p1', 1520, { evalId: 'c7' }),
        B: ev.panelDispatchError('p2', 'model overloaded', 80, { evalId: 'c7' }),
        c: ev.panelDispatchStart('p3', { label: 'Reviewer 3' }),
      };
      expectObservable(cold<EvoEvent>('-a-b-A-B-c-|', events).pipe(summarize())).toBe('-----------(s|)', {
        s: expect.objectContaining({
          panelDispatches: [
            {
              id: 'p1',
              evalId: 'c7',
              subagentType: 'research-agent',
              label: 'Reviewer 1',
              description: '',
              status: 'completed',
              durationMs: 1520,
            },
            {
              id: 'p2',
              evalId: 'c7',
              subagentType: 'code-agent',
              label: 'Reviewer 2',
              description: '',
              status: 'failed',
              durationMs: 80,
              error: 'model overloaded',
            },
            {
              id: 'p3',
              evalId: '',
              subagentType: 'research-agent',
              label: 'Reviewer 3',
              description: '',
              status: 'unfinished',
            },
          ],
        }),
      });
    });
  });
});

describe('summarize, results before their calls', () => {
  it('fills in the place of each result whose call comes later, as far back as results are remembered', async () => {
    // 1,100 results whose calls were made before a --resume, then their calls, then one plain call and result.
    const ids = Array.from({ length: 1100 }, (_, i) => `r${i}`);
    const events: EvoEvent[] = [
      ...ids.map((id, i) => ev.toolResult('read_file', `content ${i}`, { id, success: i % 2 === 0 })),
      ev.toolResult('ls', 'no id'),
      ...ids.map((id, i) => ev.toolCall('read_file', { file_path: `/f${i}` }, { id })),
      ev.toolCall('ls', { path: '.' }, { id: 'c1' }),
      ev.toolResult('ls', 'a b', { id: 'c1' }),
    ];
    const summary = await lastValueFrom(from(events).pipe(summarize()));
    expect(summary.invocations.map((i) => i.id)).toEqual([...ids, '', 'c1']);
    expect(new Set(summary.invocations.map((i) => i.key)).size).toBe(summary.invocations.length);
    // The oldest results are forgotten past the window: their calls, coming too late, leave them without arguments.
    const filled = summary.invocations.filter((i) => i.name === 'read_file' && 'file_path' in i.args);
    expect(filled.map((i) => i.id)).toEqual(ids.slice(-1024));
    expect(summary.invocations.map((i) => i.status)).toEqual([
      ...ids.map((_, i) => (i % 2 === 0 ? 'succeeded' : 'failed')),
      'succeeded',
      'succeeded',
    ]);
    expect(summary.invocations.at(-1)).toMatchObject({ key: key('c1'), args: { path: '.' } });
  });
});
