import fc from 'fast-check';
import type * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import { eventCodecs } from '../../src/events.js';
import { fastGuard } from '../../src/decode/fastGuard.js';
import { fixtureBytes } from '../support/collect.js';

const codecs = Object.entries(eventCodecs) as [string, t.Mixed][];

/** Objects shaped like events, with fields of every JSON kind, missing or present: where the guards could differ. */
const eventLike = fc.record(
  {
    type: fc.constantFrom(...codecs.map(([type]) => type)),
    content: fc.oneof(fc.string(), fc.jsonValue()),
    name: fc.oneof(fc.string(), fc.integer()),
    id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    args: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()), fc.string()),
    success: fc.oneof(fc.boolean(), fc.constant('true')),
    subagent: fc.string(),
    description: fc.oneof(fc.string(), fc.constant(undefined)),
    instance_id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
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
    input_tokens: fc.oneof(fc.integer(), fc.string()),
    output_tokens: fc.integer(),
    response: fc.string(),
    message: fc.string(),
    eval_id: fc.string(),
    subagent_type: fc.string(),
    label: fc.string(),
    duration_ms: fc.oneof(fc.integer(), fc.string()),
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
