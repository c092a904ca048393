// The trackers the operators are built on, driven without Rx.
import { describe, expect, it } from 'vitest';
import { RunTally } from '../../operators/RunTally.js';
import { ToolCallTracker } from '../../operators/ToolCallTracker.js';
import { events as ev } from '../../testing/events.js';

const task = (id: string) => ev.toolCall('task', { subagent_type: 'code-agent', description: id }, { id });
const start = (id: string) => ev.subagentStart('code-agent', { instanceId: `task:${id}`, toolCallId: id });
const paused = (id: string) =>
  ev.subagentToolCall(
    'code-agent',
    'execute',
    { command: 'rm -rf /scratch', ratio: NaN },
    { id: 'call_0', instanceId: `task:${id}` },
  );
const approval = (n: string) =>
  ev.interrupt(n, [{ name: 'execute', args: { command: 'rm -rf /scratch', ratio: NaN } }]);

describe('ToolCallTracker', () => {
  it('ends every open call the approvals ask about, in any agent, and the task calls of their sub-agents, as awaiting input', () => {
    const tracker = new ToolCallTracker(() => 0);
    for (const e of [
      task('a'),
      task('b'),
      start('a'),
      start('b'),
      paused('a'),
      paused('b'),
      approval('1'),
      approval('2'),
    ]) {
      tracker.push(e);
    }
    tracker.push(ev.toolCall('ls', { path: '.' }, { id: 'c9' }));
    expect(tracker.finish().map((i) => [i.name, i.instanceId ?? null, i.status])).toEqual([
      ['task', null, 'awaiting-input'],
      ['task', null, 'awaiting-input'],
      ['execute', 'task:a', 'awaiting-input'],
      ['execute', 'task:b', 'awaiting-input'],
      ['ls', null, 'unfinished'],
    ]);
  });

  it('leaves a sub-agent call whose arguments the approval does not match unfinished, and its task too', () => {
    const tracker = new ToolCallTracker(() => 0);
    for (const e of [task('a'), start('a'), paused('a')]) tracker.push(e);
    tracker.push(ev.interrupt('1', [{ name: 'execute', args: { command: 'something else' } }]));
    expect(tracker.finish().map((i) => i.status)).toEqual(['unfinished', 'unfinished']);
  });
});

describe('RunTally', () => {
  it('summarizes what it was fed: outcome, statuses, counts by wire type', () => {
    const tally = new RunTally(() => 0);
    for (const e of [task('a'), start('a'), paused('a'), approval('1'), ev.unknown('heartbeat'), ev.done('')]) {
      tally.push(e);
    }
    const summary = tally.summary();
    expect(summary.outcome).toBe('needs-input');
    expect(summary.invocations.map((i) => [i.name, i.status])).toEqual([
      ['task', 'awaiting-input'],
      ['execute', 'awaiting-input'],
    ]);
    expect(summary.counts).toEqual({
      tool_call: 1,
      subagent_start: 1,
      subagent_tool_call: 1,
      interrupt: 1,
      heartbeat: 1,
      done: 1,
    });
    expect(summary.delegations.map((d) => [d.key, d.ended])).toEqual([['task:a', false]]);
  });

  it('without a summary to make, still tells its listener everything, and keeps neither the text nor the lists', () => {
    const seen: string[] = [];
    const tally = new RunTally(() => 0, { summary: false });
    tally.listen({
      invocation: (i) => seen.push(`${i.name} ${i.status}`),
      delegationStarted: (d) => seen.push(`start ${d.key}`),
      delegationEnded: (d) => seen.push(`end ${d.key}`),
      panelStarted: (e) => seen.push(`panel ${e.id}`),
      panelEnded: (e) => seen.push(`panel ${e.id} ${e.type}`),
    });
    for (const e of [task('a'), start('a'), ev.text('hello'), ev.panelDispatchStart('p1'), ev.done('hello')])
      tally.push(e);
    tally.push(ev.panelDispatchComplete('p1', 5));
    tally.push(ev.toolResult('task', 'ok', { id: 'a' }));
    const summary = tally.summary();
    expect(seen).toEqual([
      'task running',
      'start task:a',
      'panel p1',
      'panel p1 panel_dispatch_complete',
      'task succeeded',
      'end task:a',
    ]);
    expect(summary).toMatchObject({
      outcome: 'completed',
      text: '',
      invocations: [],
      delegations: [],
      panelDispatches: [],
    });
    expect(summary.counts).toMatchObject({ text: 1, tool_call: 1, tool_result: 1 });
  });

  it('without a summary, keeps of errors and questions only what the outcome needs', () => {
    const tally = new RunTally(() => 0, { summary: false });
    for (const e of [ev.error('first'), ev.error('second'), ev.askUser('q1', [{ question: 'why?' }]), ev.done('x')])
      tally.push(e);
    expect([tally.firstError, tally.outcome()]).toEqual(['first', 'failed']);
    expect(tally.summary()).toMatchObject({
      errors: ['first'],
      questions: [],
      interrupts: [],
      pendingQuestions: [{ interrupt_id: 'q1' }],
    });
  });
});
