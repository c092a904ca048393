// The trackers the operators are built on, driven without Rx.
import { describe, expect, it } from 'vitest';
import type { RunChange } from '../../operators/index.js';
import { RunModel } from '../../operators/RunModel.js';
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

/** What a listener hears, one line per change. */
function said(change: RunChange): string {
  switch (change.kind) {
    case 'invocation':
      return `${change.invocation.name} ${change.invocation.status}${change.delegation ? ` in ${change.delegation.key}` : ''}`;
    case 'delegation-start':
    case 'delegation-end':
    case 'delegation-event':
      return `${change.kind} ${change.delegation.key}`;
    case 'panel':
      return `panel ${change.panel.id} ${change.panel.status}`;
    case 'text':
      return `text ${change.delta}`;
    default:
      return change.kind;
  }
}

describe('RunModel', () => {
  it('made with a summary, summarizes what it was fed: outcome, statuses, counts by wire type', () => {
    const model = new RunModel(() => 0, { summary: true });
    for (const e of [task('a'), start('a'), paused('a'), approval('1'), ev.unknown('heartbeat'), ev.done('')]) {
      model.push(e);
    }
    const summary = model.summary();
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

  it('tells each listener its changes in order, the deltas only to one that asks, and closes what is open at the end', () => {
    const model = new RunModel(() => 0);
    const structure: string[] = [];
    const everything: string[] = [];
    model.listen((c) => structure.push(said(c)));
    model.listen((c) => everything.push(said(c)), { deltas: true });
    for (const e of [
      task('a'),
      start('a'),
      paused('a'),
      ev.text('hello'),
      ev.panelDispatchStart('p1'),
      ev.done('hello'),
    ])
      model.push(e);
    model.push(ev.panelDispatchComplete('p1', 5));
    model.push(ev.toolResult('task', 'ok', { id: 'a' }));
    model.finish();
    const closing = ['execute unfinished in task:a', 'delegation-end task:a'];
    expect(structure).toEqual([
      'task running',
      'delegation-start task:a',
      'execute running in task:a',
      'panel p1 unfinished',
      'done',
      'panel p1 completed',
      'task succeeded',
      ...closing,
    ]);
    expect(everything).toEqual([
      'task running',
      'delegation-start task:a',
      'delegation-event task:a',
      'execute running in task:a',
      'text hello',
      'panel p1 unfinished',
      'done',
      'panel p1 completed',
      'task succeeded',
      ...closing,
    ]);
    expect([model.events, model.counts(), model.response, model.outcome()]).toEqual([
      8,
      {
        tool_call: 1,
        subagent_start: 1,
        subagent_tool_call: 1,
        text: 1,
        panel_dispatch_start: 1,
        done: 1,
        panel_dispatch_complete: 1,
        tool_result: 1,
      },
      'hello',
      'completed',
    ]);
  });

  it('closes the calls a sub-agent leaves open when it ends, in that sub-agent, before its end', () => {
    const model = new RunModel(() => 0, { summary: true });
    const heard: string[] = [];
    model.listen((c) => heard.push(said(c)));
    for (const e of [task('a'), start('a'), paused('a'), ev.subagentEnd('code-agent', { instanceId: 'task:a' })])
      model.push(e);
    // An approval after the sub-agent ended asks about nothing it still runs.
    model.push(approval('1'));
    model.push(ev.toolResult('task', 'done', { id: 'a' }));
    model.finish();
    expect(heard).toEqual([
      'task running',
      'delegation-start task:a',
      'execute running in task:a',
      'execute unfinished in task:a',
      'delegation-end task:a',
      'gate',
      'task succeeded',
    ]);
    expect(model.summary().invocations.map((i) => [i.name, i.status])).toEqual([
      ['task', 'succeeded'],
      ['execute', 'unfinished'],
    ]);
  });

  it('takes the whole event before it throws what a listener threw', () => {
    const model = new RunModel(() => 0, { summary: true });
    model.listen((c) => {
      if (c.kind === 'delegation-start') throw new Error('listener');
    });
    expect(() => model.push(paused('a'))).toThrow('listener');
    model.push(ev.subagentToolResult('code-agent', 'execute', 'ok', { id: 'call_0', instanceId: 'task:a' }));
    const summary = model.summary();
    expect(summary.delegations.map((d) => [d.key, d.events])).toEqual([['subagent#1', 2]]);
    expect(summary.invocations.map((i) => [i.name, i.status])).toEqual([['execute', 'succeeded']]);
  });

  it('keeps of errors and questions only what the outcome needs, and has no summary to give', () => {
    const model = new RunModel(() => 0);
    for (const e of [ev.error('first'), ev.error('second'), ev.askUser('q1', [{ question: 'why?' }]), ev.done('x')])
      model.push(e);
    expect([model.firstError, model.outcome(), model.pending.map((g) => g.type)]).toEqual([
      'first',
      'failed',
      ['ask_user'],
    ]);
    expect(() => model.summary()).toThrow(
      new TypeError('RunModel: summary() needs a model made with { summary: true }'),
    );
  });

  it('tells every listener a change before it throws the first listener error, and every closing change before that', () => {
    const model = new RunModel(() => 0);
    const heard: string[] = [];
    model.listen(() => {
      throw new Error('first listener');
    });
    const stop = model.listen((c) => heard.push(said(c)));
    expect(() => model.push(ev.toolCall('ls', {}, { id: 'c1' }))).toThrow('first listener');
    expect(() => model.push(ev.toolCall('cat', {}, { id: 'c2' }))).toThrow('first listener');
    expect(() => model.finish()).toThrow('first listener');
    expect(heard).toEqual(['ls running', 'cat running', 'ls unfinished', 'cat unfinished']);
    stop();
    model.finish();
    expect(heard).toHaveLength(4);
  });
});
