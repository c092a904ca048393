// Events larger than the broker's max_payload (1 MiB on a default server): a
// `write_file` call's arguments, a long `done.response`. Each goes as parts on
// its attempt's own subject and reads back identical, with maxLineBytes kept.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJsonl, toJsonl } from '../../src/events/decode/jsonl.js';
import type { DecodeIssue } from '../../src/events/errors.js';
import type { EvoEvent } from '../../src/events/codecs.js';
import { fromJetStream, positionOf, publishTo, submitRun, type RunRequest } from '../../src/jetstream/index.js';
import { partBytesOf } from '../../src/jetstream/wire/parts.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { connectBroker, fixtureEvents, servedWorker, suiteStreams, writeByHand } from './support.js';

const MB = 1_000_000;
const done = '{"type": "done", "content": "", "response": ""}';
const contract = fixtureEvents('contract-example.jsonl');
/** What the fake CLI's `bigLine` step writes, decoded. */
const bigResult = (bytes: number) => ({
  type: 'tool_result',
  name: 'read_file',
  success: true,
  content: 'x'.repeat(bytes),
});

/** Whether two runs' events are the same, without a diff of megabytes when they are not. */
function sameEvents(actual: readonly EvoEvent[], expected: readonly unknown[]): boolean {
  return actual.length === expected.length && actual.every((e, i) => toJsonl(e) === toJsonl(expected[i] as EvoEvent));
}

describe('events larger than the broker’s max_payload', () => {
  const { prefix, layout, connection } = suiteStreams('large');
  let reader: NatsConnection;
  let dir: string;
  let worker: ReturnType<typeof servedWorker>;

  beforeAll(async () => {
    reader = await connectBroker();
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-large-'));
    // The prompt says how big: `2` is a run with a 2 MB line.
    worker = servedWorker(connection(), {
      prefix,
      runOptions: (request: RunRequest) => ({
        prompt: request.prompt,
        ...fakeEvoSci([
          { transcript: fixturePath('contract-example.jsonl'), count: 2 },
          { bigLine: Number(request.prompt) * MB },
          { lines: [done] },
        ]),
      }),
    });
  });
  afterAll(async () => {
    worker?.stop();
    await reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([2, 8, 48])(
    'go through a worker as parts and read back identical: a %i MB line',
    async (mb) => {
      const runId = await submitRun(connection(), { prompt: String(mb) }, { prefix });
      const events = await lastValueFrom(fromJetStream(reader, runId, { prefix }).pipe(toArray()));
      expect(events).toHaveLength(4);
      const [first, second, big, last] = events;
      expect([first, second, last]).toEqual([...contract.slice(0, 2), JSON.parse(done)]);
      // Compared in place: a diff, or a copy, of 48 MB would cost more than the run.
      expect({ ...big, content: '' }).toEqual(bigResult(0));
      expect(big?.type === 'tool_result' && big.content === 'x'.repeat(mb * MB)).toBe(true);
      expect(await worker.when((a) => a.runId === runId && a.type !== 'started')).toMatchObject({
        type: 'finished',
        outcome: 'completed',
      });
    },
    120_000,
  );

  it('stores an event as parts that each fit a message, in order, each with the event’s EvoSci-Seq', async () => {
    const runId = await submitRun(connection(), { prompt: '3' }, { prefix });
    await lastValueFrom(fromJetStream(reader, runId, { prefix }));
    const line = Buffer.from(toJsonl(bigResult(3 * MB) as EvoEvent));
    const size = partBytesOf(reader);
    // Room is left in each for its headers, which count against max_payload too.
    expect(size).toBeLessThanOrEqual(reader.info!.max_payload - 4096);
    const parts = Math.ceil(line.length / size);
    const consumer = await jetstream(reader).consumers.get(layout.eventsStream, {
      filter_subjects: layout.attemptSubject(runId, 1),
      deliver_policy: DeliverPolicy.All,
    });
    const messages = [];
    for (let left = parts + 3; left > 0; left--) messages.push((await consumer.next({ expires: 2000 }))!);
    await consumer.delete();
    const headers = messages.map((m) => [m.headers?.get('EvoSci-Seq'), m.headers?.get('EvoSci-Part') || undefined]);
    expect(headers).toEqual([
      ['1', undefined],
      ['2', undefined],
      ...Array.from({ length: parts }, (_, i) => ['3', `${i + 1}/${parts}`]),
      ['4', undefined],
    ]);
    for (const m of messages) expect(m.data.length).toBeLessThanOrEqual(size);
    expect(Buffer.concat(messages.slice(2, -1).map((m) => m.data)).equals(line)).toBe(true);
  }, 60_000);

  it('carries a write_file call of 8 MB and a 2 MB done, in any script, as run() read them', async () => {
    // Multi-byte characters, so that parts cut through them.
    const file = 'é€𝄞 '.repeat((8 * MB) / 10);
    const response = '€ done '.repeat((2 * MB) / 9);
    const transcript = join(dir, 'huge.jsonl');
    writeFileSync(
      transcript,
      [
        JSON.stringify({ type: 'tool_call', name: 'write_file', args: { path: 'notes.md', content: file }, id: 'c1' }),
        JSON.stringify({ type: 'tool_result', name: 'write_file', success: true, content: 'ok', tool_call_id: 'c1' }),
        JSON.stringify({ type: 'done', content: response, response }),
      ].join('\n') + '\n',
    );
    const local = await lastValueFrom(
      run({ prompt: 'x', ...fakeEvoSci([{ transcript }]) }).pipe(
        publishTo(connection(), 'huge-1', { prefix }),
        toArray(),
      ),
    );
    const remote = await lastValueFrom(fromJetStream(reader, 'huge-1', { prefix }).pipe(toArray()));
    expect(local).toHaveLength(3);
    expect(sameEvents(remote, local)).toBe(true);
    // Positions count events, not parts: reading after the big call gives the rest.
    const after = positionOf(remote[0]!)!;
    expect(after.sequence).toBe(1);
    const rest = await lastValueFrom(fromJetStream(reader, 'huge-1', { prefix, after }).pipe(toArray()));
    expect(sameEvents(rest, local.slice(1))).toBe(true);
  }, 60_000);

  it('keeps maxLineBytes: a longer event is reported and dropped as fromJsonl does, and the run goes on', async () => {
    const runId = await submitRun(connection(), { prompt: '2' }, { prefix });
    const issues: DecodeIssue[] = [];
    const events = await lastValueFrom(
      fromJetStream(reader, runId, { prefix, maxLineBytes: MB, onDiagnostic: (i) => issues.push(i) }).pipe(toArray()),
    );
    expect(sameEvents(events, [...contract.slice(0, 2), JSON.parse(done)])).toBe(true);
    const local: DecodeIssue[] = [];
    const lines = [...contract.slice(0, 2), bigResult(2 * MB), JSON.parse(done)].map((e) => toJsonl(e as EvoEvent));
    await lastValueFrom(fromJsonl(lines.join(''), { maxLineBytes: MB, onDiagnostic: (i) => local.push(i) }), {
      defaultValue: undefined,
    });
    expect(issues.map((i) => [i.line, i.message, i.raw.slice(0, 64)])).toEqual(
      local.map((i) => [i.line, i.message, i.raw.slice(0, 64)]),
    );
    expect(issues[0]!.message).toBe(`line longer than maxLineBytes (${MB}); dropped`);
  }, 60_000);
  it('puts parts stored out of order, or twice, back together once, in order, and positions after them', async () => {
    // As publishes retried across a broker restart can leave them: parts of event 2 around and after event 3.
    const runId = 'by-hand';
    const events: EvoEvent[] = [
      { type: 'text', content: 'one' },
      { type: 'text', content: `two ${'é'.repeat(10)}` },
      { type: 'text', content: 'three' },
    ];
    const line = Buffer.from(toJsonl(events[1]!));
    const third = Math.ceil(line.length / 3);
    const part = (i: number) => line.subarray((i - 1) * third, i * third);
    const whole = (i: number) => Buffer.from(toJsonl(events[i]!));
    await writeByHand(
      connection(),
      layout,
      runId,
      [
        { seq: 1, payload: whole(0) },
        { seq: 2, part: '2/3', payload: part(2) },
        { seq: 3, payload: whole(2) },
        { seq: 2, part: '1/3', payload: part(1) },
        { seq: 2, part: '2/3', payload: part(2) },
        { seq: 1, payload: whole(0) },
        { seq: 2, part: '3/3', payload: part(3) },
      ],
      3,
    );
    const read = await lastValueFrom(fromJetStream(reader, runId, { prefix }).pipe(toArray()));
    expect(read).toEqual(events);
    // After event 1, a new reader starts where nothing of event 2 is missed.
    const after = positionOf(read[0]!)!;
    expect(await lastValueFrom(fromJetStream(reader, runId, { prefix, after }).pipe(toArray()))).toEqual(
      events.slice(1),
    );
  });
});
