import { describe, expect, it } from 'vitest';
import { decodeLine, EvoEvent, eventCodecs, toJsonl } from '../../index.js';
import { events } from '../../testing/index.js';

const built = {
  thinking: events.thinking('hm'),
  text: events.text('hi'),
  toolCall: events.toolCall('read_file', { path: 'a' }, 'c1'),
  toolResult: events.toolResult('read_file', 'x', { id: 'c1', success: false }),
  idlessResult: events.toolResult('read_file', 'x'),
  subagentStart: events.subagentStart('research-agent', { description: 'find' }),
  subagentToolCall: events.subagentToolCall('research-agent', 'search', { q: 1 }, 's1'),
  subagentToolResult: events.subagentToolResult('research-agent', 'search', 'hits'),
  subagentText: events.subagentText('research-agent', 'hello', 'i1'),
  subagentTextOld: events.subagentText('research-agent', 'hello'),
  subagentEnd: events.subagentEnd('research-agent'),
  subagentStartNow: events.subagentStart('research-agent', { instanceId: 'task:1', toolCallId: 't1' }),
  subagentToolCallNow: events.subagentToolCall('research-agent', 'search', {}, 'call_0', 'task:1'),
  subagentToolResultNow: events.subagentToolResult('research-agent', 'search', 'ok', {
    id: 'call_0',
    instanceId: 'task:1',
  }),
  subagentEndNow: events.subagentEnd('research-agent', 'task:1'),
  panelDispatchStart: events.panelDispatchStart('pd1', { evalId: 'c9', label: 'Reviewer 1' }),
  panelDispatchComplete: events.panelDispatchComplete('pd1', 1200, 'c9'),
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
});
