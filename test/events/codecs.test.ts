import { isRight, isLeft } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import {
  decodeLine,
  DecodeIssue,
  eventCodecs,
  EvoEvent,
  ToolCallEvent,
  type AskUserEvent,
  type EvoEventType,
  type InterruptEvent,
} from '../../src/index.js';

/** One well-formed event of every type, as the current producer sends it. */
const samples: { [K in EvoEventType]: Extract<EvoEvent, { type: K }> } = {
  thinking: { type: 'thinking', content: 'hmm', id: 'th_1' },
  text: { type: 'text', content: 'Hello' },
  tool_call: { type: 'tool_call', name: 'read_file', args: { path: 'a.md' }, id: 'call_1' },
  tool_result: { type: 'tool_result', name: 'read_file', content: 'x', success: true, id: 'call_1' },
  subagent_start: {
    type: 'subagent_start',
    name: 'research-agent',
    description: '',
    instance_id: 'task:a1',
    tool_call_id: 'call_0',
  },
  subagent_tool_call: {
    type: 'subagent_tool_call',
    subagent: 'research-agent',
    name: 'web_search',
    args: { q: 'x' },
    id: 's1',
    instance_id: 'task:a1',
  },
  subagent_tool_result: {
    type: 'subagent_tool_result',
    subagent: 'research-agent',
    name: 'web_search',
    content: 'r',
    success: false,
    id: 's1',
    instance_id: 'task:a1',
  },
  subagent_text: { type: 'subagent_text', subagent: 'research-agent', content: 'found', instance_id: 'i1' },
  subagent_end: { type: 'subagent_end', name: 'research-agent', instance_id: 'task:a1' },
  panel_dispatch_start: {
    type: 'panel_dispatch_start',
    eval_id: 'call_7',
    id: 'pd_1',
    subagent_type: 'research-agent',
    label: 'Reviewer 1',
    description: 'Check the proof',
  },
  panel_dispatch_complete: { type: 'panel_dispatch_complete', eval_id: 'call_7', id: 'pd_1', duration_ms: 1520 },
  panel_dispatch_error: {
    type: 'panel_dispatch_error',
    eval_id: '',
    id: 'pd_2',
    duration_ms: 80,
    error: 'model overloaded',
  },
  tool_selection: { type: 'tool_selection', tools: ['read_file', 'web_search'] },
  summarization_start: { type: 'summarization_start' },
  summarization: { type: 'summarization', content: 'summary' },
  usage_stats: { type: 'usage_stats', input_tokens: 10, output_tokens: 2 },
  interrupt: {
    type: 'interrupt',
    interrupt_id: 'int_1',
    action_requests: [{ name: 'execute', args: { command: 'rm -rf build' }, description: 'Run a shell command' }],
    review_configs: [{ action_name: 'execute', allowed_decisions: ['approve', 'edit', 'reject'] }],
  },
  ask_user: {
    type: 'ask_user',
    interrupt_id: 'int_2',
    questions: [
      { question: 'Which dataset?', type: 'multiple_choice', choices: [{ value: 'MIRACL' }, { value: 'MKQA' }] },
      { question: 'Anything else?', type: 'text', required: false },
    ],
    tool_call_id: 'call_9',
  },
  error: { type: 'error', message: 'boom' },
  done: { type: 'done', content: 'bye', response: 'bye' },
};

const types = Object.keys(samples) as EvoEventType[];

describe('event codecs', () => {
  it('has a codec for each of the 20 types 0.2.x sends', () => {
    expect(Object.keys(eventCodecs).sort()).toEqual([...types].sort());
    expect(types).toHaveLength(20);
  });

  it('types the questions and approvals as sent, so a client can show them', () => {
    const ask = decodeLine(JSON.stringify(samples.ask_user), 1) as AskUserEvent;
    const choices: string[] = ask.questions.flatMap((q) => (q.choices ?? []).map((c) => c.value));
    expect(choices).toEqual(['MIRACL', 'MKQA']);
    const approval = decodeLine(JSON.stringify(samples.interrupt), 1) as InterruptEvent;
    const [request] = approval.action_requests;
    expect([request?.name, request?.args?.['command'], approval.review_configs[0]?.allowed_decisions]).toEqual([
      'execute',
      'rm -rf build',
      ['approve', 'edit', 'reject'],
    ]);
    const broken = decodeLine(
      '{"type": "ask_user", "interrupt_id": "i", "questions": [{"q": 1}], "tool_call_id": ""}',
      3,
    );
    expect(broken).toBeInstanceOf(DecodeIssue);
    expect((broken as DecodeIssue).message).toMatch(/at "questions.0.question": expected string/);
  });

  it.each(types)('accepts a well-formed %s through its codec and the EvoEvent union', (type) => {
    const event = samples[type];
    expect(isRight((eventCodecs[type] as t.Decoder<unknown, unknown>).decode(event))).toBe(true);
    expect(EvoEvent.is(event)).toBe(true);
    expect(decodeLine(JSON.stringify(event), 1)).toEqual(event);
  });

  it.each([
    ['tool_result without id', { type: 'tool_result', name: 'read_file', content: 'x', success: true }],
    [
      'subagent_tool_result without id',
      { type: 'subagent_tool_result', subagent: 'a', name: 'n', content: 'c', success: true },
    ],
    ['subagent_text without instance_id', { type: 'subagent_text', subagent: 'a', content: 'c' }],
    ['tool_call with empty id', { type: 'tool_call', name: 'n', args: {}, id: '' }],
    ['subagent_tool_call with empty id', { type: 'subagent_tool_call', subagent: 'a', name: 'n', args: {}, id: '' }],
    ['ask_user with empty tool_call_id', { type: 'ask_user', interrupt_id: 'i', questions: [], tool_call_id: '' }],
    [
      'interrupt with no review configs',
      { type: 'interrupt', interrupt_id: 'i', action_requests: [], review_configs: [] },
    ],
    ['thinking with integer id 0', { type: 'thinking', content: 'c', id: 0 }],
    ['thinking without id', { type: 'thinking', content: 'c' }],
    ['subagent_start without instance_id or tool_call_id', { type: 'subagent_start', name: 'a', description: 'd' }],
    ['subagent_end without instance_id', { type: 'subagent_end', name: 'a' }],
    [
      'subagent_text with a numeric instance_id',
      { type: 'subagent_text', subagent: 'a', content: 'c', instance_id: 2 },
    ],
    [
      'interrupt with bare action requests',
      { type: 'interrupt', interrupt_id: 'default', action_requests: [{ name: 'execute' }], review_configs: [{}] },
    ],
  ])('accepts the older-producer shape: %s', (_label, event) => {
    expect(decodeLine(JSON.stringify(event), 1)).toEqual(event);
  });

  it('keeps unknown fields on the decoded object', () => {
    const line = '{"type": "tool_call", "name": "ls", "args": {}, "id": "c1", "started_at": 12.5, "meta": {"x": [1]}}';
    expect(decodeLine(line, 1)).toEqual({
      type: 'tool_call',
      name: 'ls',
      args: {},
      id: 'c1',
      started_at: 12.5,
      meta: { x: [1] },
    });
  });

  it.each([
    ['{"type": "tool_call", "args": {}, "id": "c"}', 'tool_call: at "name": expected string, got nothing'],
    [
      '{"type": "tool_call", "name": "ls", "args": "x", "id": "c"}',
      'tool_call: at "args": expected UnknownRecord, got "x"',
    ],
    [
      '{"type": "usage_stats", "input_tokens": "12", "output_tokens": 1}',
      'usage_stats: at "input_tokens": expected TokenCount, got "12"',
    ],
    [
      '{"type": "tool_result", "name": "ls", "content": "x", "success": true, "id": 7}',
      'tool_result: at "id": expected string, got 7',
    ],
    ['{"type": "tool_selection", "tools": ["a", 2]}', 'tool_selection: at "tools.1": expected string, got 2'],
    ['{"type": "done", "content": "x"}', 'done: at "response": expected string, got nothing'],
  ])('rejects a wrong shape with a readable path message: %s', (line, message) => {
    const issue = decodeLine(line, 7);
    expect(issue).toBeInstanceOf(DecodeIssue);
    expect(issue).toMatchObject({ line: 7, raw: line, message });
  });

  it('names every failing field, not only the first', () => {
    const issue = decodeLine(
      '{"type": "subagent_tool_call", "subagent": 1, "name": "n", "args": {}}',
      3,
    ) as DecodeIssue;
    expect(issue.message).toContain('at "subagent": expected string, got 1');
    expect(issue.message).toContain('at "id": expected string, got nothing');
  });

  it.each([
    ['{"type": "text", "content": ', /^not JSON: /],
    ['[1, 2]', /^not a JSON object$/],
    ['"text"', /^not a JSON object$/],
    ['null', /^not a JSON object$/],
    ['{"content": "no type"}', /^no string "type" field$/],
    ['{"type": 3}', /^no string "type" field$/],
  ])('reports a line that is not an event: %s', (line, message) => {
    const issue = decodeLine(line, 2);
    expect(issue).toBeInstanceOf(DecodeIssue);
    expect((issue as DecodeIssue).message).toMatch(message);
  });

  it('skips an unknown type unless asked to keep it, and never mistakes Object.prototype keys for types', () => {
    const line = '{"type": "heartbeat", "seq": 4}';
    expect(decodeLine(line, 1)).toBeUndefined();
    expect(decodeLine(line, 1, true)).toEqual({
      type: 'unknown',
      wireType: 'heartbeat',
      event: { type: 'heartbeat', seq: 4 },
    });
    expect(decodeLine('{"type": "unknown", "x": 1}', 1, true)).toEqual({
      type: 'unknown',
      wireType: 'unknown',
      event: { type: 'unknown', x: 1 },
    });
    expect(decodeLine('{"type": "constructor"}', 1)).toBeUndefined();
    expect(decodeLine('{"type": "__proto__"}', 1)).toBeUndefined();
  });

  it('cuts the raw text of a huge bad line', () => {
    const line = `{"type": "text", "content": ${'9'.repeat(10_000)}`;
    const issue = decodeLine(line, 1) as DecodeIssue;
    expect(issue.raw.length).toBeLessThan(400);
    expect(line.startsWith(issue.raw.slice(0, -1))).toBe(true);
  });

  it('ToolCallEvent decodes to a Left for a missing args field', () => {
    expect(isLeft(ToolCallEvent.decode({ type: 'tool_call', name: 'x', id: '' }))).toBe(true);
  });
});
