import { deepStrictEqual } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { decodeLine, EvoEvent, eventCodecs, toJsonl } from '../../index.js';
import { events } from '../../testing/index.js';

const built = {
  thinking: events.thinking('hm'),
  text: events.text('hi'),
  toolCall: events.toolCall('read_file', { path: 'a' }, { id: 'c1' }),
  toolResult: events.toolResult('read_file', 'x', { id: 'c1', success: false }),
  idlessResult: events.toolResult('read_file', 'x'),
  subagentStart: events.subagentStart('research-agent', { description: 'find' }),
  subagentToolCall: events.subagentToolCall('research-agent', 'search', { q: 1 }, { id: 's1' }),
  subagentToolResult: events.subagentToolResult('research-agent', 'search', 'hits'),
  subagentText: events.subagentText('research-agent', 'hello', { instanceId: 'i1' }),
  subagentTextOld: events.subagentText('research-agent', 'hello'),
  subagentEnd: events.subagentEnd('research-agent'),
  subagentStartNow: events.subagentStart('research-agent', { instanceId: 'task:1', toolCallId: 't1' }),
  subagentToolCallNow: events.subagentToolCall('research-agent', 'search', {}, { id: 'call_0', instanceId: 'task:1' }),
  subagentToolResultNow: events.subagentToolResult('research-agent', 'search', 'ok', {
    id: 'call_0',
    instanceId: 'task:1',
  }),
  subagentEndNow: events.subagentEnd('research-agent', { instanceId: 'task:1' }),
  panelDispatchStart: events.panelDispatchStart('pd1', { evalId: 'c9', label: 'Reviewer 1' }),
  panelDispatchComplete: events.panelDispatchComplete('pd1', 1200, { evalId: 'c9' }),
  panelDispatchError: events.panelDispatchError('pd2', 'overloaded', 40),
  toolSelection: events.toolSelection(['ls']),
  summarizationStart: events.summarizationStart(),
  summarization: events.summarization('short'),
  usage: events.usage(3, 4),
  interrupt: events.interrupt('i1', [{ name: 'execute' }]),
  askUser: events.askUser('i2', [{ question: 'Which?' }]),
  error: events.error('boom'),
  done: events.done('bye'),
};

describe('testing event builders', () => {
  it.each(Object.entries(built))('%s builds an event the codecs accept', (_name, event) => {
    expect(EvoEvent.is(event)).toBe(true);
    expect(decodeLine(toJsonl(event).trimEnd(), 1)).toEqual(event);
  });

  it('cover every event type', () => {
    expect(new Set(Object.values(built).map((e) => e.type))).toEqual(new Set(Object.keys(eventCodecs)));
  });

  it('leave out the ids that older producers omit', () => {
    expect('id' in built.idlessResult).toBe(false);
    expect('id' in built.subagentToolResult).toBe(false);
    expect('instance_id' in built.subagentTextOld).toBe(false);
    expect(built.toolResult).toMatchObject({ id: 'c1', success: false });
    expect('instance_id' in built.subagentStart || 'tool_call_id' in built.subagentStart).toBe(false);
    expect(built.subagentStartNow).toEqual({
      type: 'subagent_start',
      name: 'research-agent',
      description: '',
      instance_id: 'task:1',
      tool_call_id: 't1',
    });
  });

  it('take what every event of the type has positionally, and the rest in a last options object', () => {
    deepStrictEqual(events.toolCall('read_file', { path: 'a' }, { id: 'c1' }), {
      type: 'tool_call',
      name: 'read_file',
      args: { path: 'a' },
      id: 'c1',
    });
    deepStrictEqual(events.subagentToolCall('research-agent', 'search', {}, { id: 'call_0', instanceId: 'task:1' }), {
      type: 'subagent_tool_call',
      subagent: 'research-agent',
      name: 'search',
      args: {},
      id: 'call_0',
      instance_id: 'task:1',
    });
    deepStrictEqual(events.subagentText('coder', 'hi', { instanceId: 'task:2' }), {
      type: 'subagent_text',
      subagent: 'coder',
      content: 'hi',
      instance_id: 'task:2',
    });
    deepStrictEqual(events.interrupt('i1', [], { reviewConfigs: [{ action_name: 'execute' }] }).review_configs, [
      { action_name: 'execute' },
    ]);
    deepStrictEqual(events.done('bye', { content: 'last words' }), {
      type: 'done',
      content: 'last words',
      response: 'bye',
    });
    // Given as `undefined`, an option is left out as if not given.
    deepStrictEqual(events.subagentEnd('coder', { instanceId: undefined }), { type: 'subagent_end', name: 'coder' });
  });

  it('still read the positional arguments of before, deprecated, as the same options', () => {
    const same = (old: unknown, now: unknown) => deepStrictEqual(old, now);
    same(events.thinking('hm', 'r1'), events.thinking('hm', { id: 'r1' }));
    same(events.toolCall('ls', {}, 'c1'), events.toolCall('ls', {}, { id: 'c1' }));
    same(
      events.subagentToolCall('coder', 'ls', {}, 'c1', 'task:1'),
      events.subagentToolCall('coder', 'ls', {}, { id: 'c1', instanceId: 'task:1' }),
    );
    same(events.subagentToolCall('coder', 'ls', {}, 'c1'), events.subagentToolCall('coder', 'ls', {}, { id: 'c1' }));
    same(events.subagentText('coder', 'x', 'task:1'), events.subagentText('coder', 'x', { instanceId: 'task:1' }));
    same(events.subagentEnd('coder', 'task:1'), events.subagentEnd('coder', { instanceId: 'task:1' }));
    same(events.panelDispatchComplete('p', 5, 'c9'), events.panelDispatchComplete('p', 5, { evalId: 'c9' }));
    same(events.panelDispatchError('p', 'x', 5, 'c9'), events.panelDispatchError('p', 'x', 5, { evalId: 'c9' }));
    same(
      events.interrupt('i', [], [{ action_name: 'a' }]),
      events.interrupt('i', [], { reviewConfigs: [{ action_name: 'a' }] }),
    );
    same(events.askUser('i', [], 'c1'), events.askUser('i', [], { toolCallId: 'c1' }));
    same(events.done('r', 'c'), events.done('r', { content: 'c' }));
  });
});
