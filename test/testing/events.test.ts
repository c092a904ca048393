import { describe, expect, it } from 'vitest';
import { decodeLine, EvoEvent, eventCodecs, toJsonl } from '../../index.js';
import { events } from '../../testing/index.js';

const built = {
  thinking: events.thinking('hm'),
  text: events.text('hi'),
  toolCall: events.toolCall('read_file', { path: 'a' }, 'c1'),
  toolResult: events.toolResult('read_file', 'x', { id: 'c1', success: false }),
  idlessResult: events.toolResult('read_file', 'x'),
  subagentStart: events.subagentStart('research-agent', 'find'),
  subagentToolCall: events.subagentToolCall('research-agent', 'search', { q: 1 }, 's1'),
  subagentToolResult: events.subagentToolResult('research-agent', 'search', 'hits'),
  subagentText: events.subagentText('research-agent', 'hello', 'i1'),
  subagentTextOld: events.subagentText('research-agent', 'hello'),
  subagentEnd: events.subagentEnd('research-agent'),
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
  });
});
