import fc from 'fast-check';
import type * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import { eventCodecs } from '../../src/events/codecs.js';
import { fastGuard } from '../../src/events/decode/fastGuard.js';
import { decodeLine, DecodeIssue } from '../../src/events/decode/decodeLine.js';
import { fixtureBytes } from '../support/collect.js';

const codecs = Object.entries(eventCodecs) as [string, t.Mixed][];

/** Whole numbers on both sides of ±2^53, as JSON.parse gives them. */
const anInteger = fc.oneof(fc.integer(), fc.constantFrom(2 ** 53, 2 ** 60, -(2 ** 60), 1e21));

/** Objects shaped like events, with fields of every JSON kind, missing or present: where the guards could differ. */
const eventLike = fc.record(
  {
    type: fc.constantFrom(...codecs.map(([type]) => type)),
    content: fc.oneof(fc.string(), fc.jsonValue()),
    name: fc.oneof(fc.string(), fc.integer()),
    id: fc.oneof(fc.string(), anInteger, fc.constant(null)),
    args: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()), fc.string()),
    success: fc.oneof(fc.boolean(), fc.constant('true')),
    subagent: fc.string(),
    description: fc.oneof(fc.string(), fc.constant(undefined)),
    instance_id: fc.oneof(fc.string(), anInteger, fc.constant(null)),
    tool_call_id: fc.string(),
    interrupt_id: fc.string(),
    questions: fc.array(
      fc.record(
        {
          question: fc.oneof(fc.string(), fc.integer()),
          type: fc.string(),
          choices: fc.array(fc.oneof(fc.record({ value: fc.string() }), fc.record({ value: fc.integer() }))),
          required: fc.oneof(fc.boolean(), fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
    ),
    action_requests: fc.array(fc.record({ name: fc.string(), args: fc.jsonValue() }, { requiredKeys: [] })),
    review_configs: fc.array(fc.dictionary(fc.string(), fc.jsonValue())),
    tools: fc.array(fc.oneof(fc.string(), fc.integer())),
    input_tokens: fc.oneof(anInteger, fc.string()),
    output_tokens: anInteger,
    response: fc.string(),
    message: fc.string(),
    eval_id: fc.string(),
    subagent_type: fc.string(),
    label: fc.string(),
    duration_ms: fc.oneof(anInteger, fc.string()),
    error: fc.string(),
  },
  { requiredKeys: ['type'] },
);

describe('fastGuard', () => {
  it('accepts exactly what each codec’s own guard accepts, for JSON values', () => {
    const guards = codecs.map(([type, codec]) => [type, codec, fastGuard(codec)] as const);
    fc.assert(
      fc.property(fc.oneof(eventLike, fc.jsonValue()), (value) => {
        const parsed: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
        for (const [, codec, guard] of guards) expect(guard(parsed)).toBe(codec.is(parsed));
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts every event of a real run', () => {
    const text = new TextDecoder().decode(fixtureBytes('research-run.jsonl'));
    for (const line of text.split('\n').filter(Boolean)) {
      const value = JSON.parse(line) as { type: string };
      const codec = (eventCodecs as Record<string, t.Mixed>)[value.type]!;
      expect(fastGuard(codec)(value)).toBe(true);
    }
  });
});

describe('the text-delta fast path of decodeLine', () => {
  it('gives what the full path gives, for text lines and lines that only look like them', () => {
    const lookalike = fc.tuple(
      fc.constantFrom('{"type": "text", "content": ', '{"type":"text","content":'),
      fc.oneof(
        fc.string().map((s) => JSON.stringify(s)),
        fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
        fc.jsonValue().map((v) => JSON.stringify(v)),
        fc.string(),
      ),
      fc.constantFrom('}', ' }', ', "x": 1}', '}}', '', '"}', ', "content": "y"}'),
    );
    fc.assert(
      fc.property(lookalike, ([prefix, value, suffix]) => {
        const line = `${prefix}${value}${suffix}`;
        // A leading blank keeps the line off the fast path: JSON.parse takes it whole.
        const seen = (result: ReturnType<typeof decodeLine>) =>
          result instanceof DecodeIssue ? result.message.replace(/\d+/g, 'N') : result;
        expect(seen(decodeLine(line, 1))).toEqual(seen(decodeLine(` ${line}`, 1)));
      }),
      { numRuns: 5000 },
    );
  });
});
