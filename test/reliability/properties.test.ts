import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, fromJsonl, toJsonl, type EvoEvent } from '../../index.js';
import { events as ev } from '../../testing/index.js';
import { collect, diagnostics } from '../support/collect.js';

/** Strings with what breaks naive line readers: newlines, U+2028/9, quotes, emoji, lone surrogates. */
const tricky = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('a\nb', 'a\r\nb', '\u2028\u2029', '"\\', '🚀🧪', '\ud83d', '\ude80x', '{"type": "done"}\n'),
);

const event: fc.Arbitrary<EvoEvent> = fc.oneof(
  tricky.map((s) => ev.text(s)),
  fc.tuple(tricky, tricky).map(([content, id]) => ev.thinking(content, { id })),
  fc
    .tuple(tricky, fc.dictionary(tricky, fc.jsonValue()), tricky)
    .map(([name, args, id]) => ev.toolCall(name, args, { id })),
  fc
    .tuple(tricky, tricky, fc.boolean(), fc.option(tricky, { nil: undefined }))
    .map(([name, content, success, id]) => ev.toolResult(name, content, { success, id })),
  fc
    .tuple(tricky, tricky, fc.option(tricky, { nil: undefined }))
    .map(([a, c, i]) => ev.subagentText(a, c, { instanceId: i })),
  fc.tuple(fc.nat(), fc.nat()).map(([i, o]) => ev.usage(i, o)),
  fc
    .tuple(tricky, fc.array(fc.record({ question: tricky, type: fc.constantFrom('text', 'multiple_choice') })))
    .map(([id, q]) => ev.askUser(id, q)),
  tricky.map((s) => ev.done(s)),
);

describe('decoding properties', () => {
  it('toJsonl then fromJsonl gives back the same events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 30 }), async (events) => {
        const { issues, onDiagnostic } = diagnostics();
        expect(await collect(fromJsonl(events.map(toJsonl).join(''), { onDiagnostic }))).toEqual(
          JSON.parse(JSON.stringify(events)) as unknown,
        );
        // JavaScript writes a large double with the fewest digits that read back to it; that text names
        // another integer, which the decoder notes as rounded while keeping the event.
        expect(issues.filter((issue) => !(issue.kept && /beyond ±2\^53/.test(issue.message)))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws out of the decoder on random bytes, and strict mode fails only with DecodeError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 10 }), async (chunks) => {
        const { issues, onDiagnostic } = diagnostics();
        const events = await collect(fromJsonl(chunks, { onDiagnostic, keepUnknown: true }));
        for (const e of events) expect(typeof e.type).toBe('string');
        for (const issue of issues) expect(issue.line).toBeGreaterThan(0);
        const strict = await collect(fromJsonl(chunks, { strict: true })).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (strict !== undefined) expect(strict).toBeInstanceOf(DecodeError);
        expect(strict === undefined).toBe(issues.length === 0);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every valid event, in order, whatever noise and chunking surround it', async () => {
    const noise = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\n')),
      fc.constant('{"type": 1}'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            event.map((e) => ({ e })),
            noise.map((n) => ({ n })),
          ),
          { maxLength: 40 },
        ),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (items, cuts) => {
          const text = items.map((item) => ('e' in item ? toJsonl(item.e) : `${item.n}\n`)).join('');
          const bytes = new TextEncoder().encode(text);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks = [...points, bytes.length].map((p, i, all) => bytes.subarray(i === 0 ? 0 : all[i - 1], p));
          const valid = items.flatMap((item) => ('e' in item ? [JSON.parse(JSON.stringify(item.e)) as unknown] : []));
          const got = await collect(fromJsonl(chunks));
          // Noise that happens to be a valid event of its own is not lost either.
          expect(got.filter((e) => valid.some((v) => JSON.stringify(v) === JSON.stringify(e)))).toEqual(valid);
        },
      ),
      { numRuns: 200 },
    );
  });
});
