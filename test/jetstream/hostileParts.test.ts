// What a publisher with a worker's rights can write into a run's events, read
// by a submitter: parts that disagree on their count are reported and never
// joined into one line, an extra part is reported, messages with large
// headers count against maxHeldBytes as what they keep, and a missing last
// part is said as it was seen, on a nats-server of this test's own.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeError, type DecodeIssue } from '../../src/events/errors.js';
import { ensureStreams, fromJetStream, layoutOf } from '../../src/jetstream/index.js';
import { ownBroker, uniquePrefix, writeByHand, type HandWritten, type OwnBroker } from './support.js';
import { brokerUsers } from './users.js';

const prefix = uniquePrefix('hostile');
const layout = layoutOf({ prefix });
const text = (content: string) => `{"type": "text", "content": "${content}"}`;
/** The line of `{"type": "text", "content": "two"}` cut in two, so that any two parts joined read as that event. */
const [HEAD, TAIL] = ['{"type": "text", "con', 'tent": "two"}'];

describe('parts written by a publisher with a worker’s rights', () => {
  let broker: OwnBroker;
  let worker: NatsConnection;
  let submitter: NatsConnection;
  let runs = 0;

  /** Writes attempt 1 of a new run as given, with the worker's rights; its id. */
  async function written(messages: readonly HandWritten[], events: number): Promise<string> {
    const runId = `run-${++runs}`;
    await writeByHand(worker, layout, runId, messages, events);
    return runId;
  }

  /** Writes a new run as given, and reads it with the submitter's rights: its texts, and the issues reported. */
  async function read(messages: readonly HandWritten[], events: number, options: { strict?: boolean } = {}) {
    const runId = await written(messages, events);
    const issues: DecodeIssue[] = [];
    const onDiagnostic = (issue: DecodeIssue) => issues.push(issue);
    const read = fromJetStream(submitter, runId, { prefix, onDiagnostic, ...options }).pipe(toArray());
    const got = await lastValueFrom(read);
    return { contents: got.map((e) => (e as { content: string }).content), issues };
  }

  beforeAll(async () => {
    broker = await ownBroker({ config: brokerUsers(prefix), credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    worker = await connect({ servers: broker.url, user: 'worker', pass: 'worker-secret' });
    submitter = await connect({ servers: broker.url, user: 'submitter', pass: 'submitter-secret' });
    await ensureStreams(worker, { prefix, storage: 'memory' });
  });
  afterAll(async () => {
    await submitter?.close();
    await worker?.close();
    await broker?.dispose();
  });

  it.each([
    {
      case: 'a part of another count after the first was read',
      parts: [
        { seq: 2, part: '1/2', payload: HEAD },
        { seq: 2, part: '2/3', payload: TAIL },
        { seq: 2, part: '3/3', payload: ' ' },
      ],
      issue:
        /^event 2 came as 2 parts, then as part 2\/3 \(message \d+\): its messages disagree; the event is dropped$/,
    },
    {
      case: 'parts of two counts held ahead of their turn',
      parts: [
        { seq: 2, part: '2/2', payload: TAIL },
        { seq: 2, part: '1/3', payload: HEAD },
        { seq: 2, part: '1/2', payload: HEAD },
      ],
      issue:
        /^event 2 came as 2 parts, then as part 1\/3 \(message \d+\): its messages disagree; the event is dropped$/,
    },
    {
      case: 'a whole event and a part of it',
      parts: [
        { seq: 2, part: '1/2', payload: HEAD },
        { seq: 2, payload: text('two') },
        { seq: 2, part: '2/2', payload: TAIL },
      ],
      issue:
        /^event 2 came as 2 parts, then as a whole event \(message \d+\): its messages disagree; the event is dropped$/,
    },
  ])('never joins an event from parts that disagree: $case', async ({ parts, issue }) => {
    const messages = [{ seq: 1, payload: text('one') }, ...parts, { seq: 3, payload: text('three') }];
    const { contents, issues } = await read(messages, 3);
    // Event 3 decodes alone: nothing of event 2 was left open in the decoder.
    expect(contents).toEqual(['one', 'three']);
    expect(issues.map((i) => [i.line, i.message])).toEqual([[2, expect.stringMatching(issue)]]);
    await expect(read(messages, 3, { strict: true })).rejects.toThrow(DecodeError);
  });

  it('reports a part beyond the count of an event already read, and an event read whole that comes again in parts', async () => {
    const { contents, issues } = await read(
      [
        { seq: 1, payload: text('one') },
        { seq: 2, part: '1/2', payload: HEAD },
        { seq: 2, part: '2/2', payload: TAIL },
        { seq: 2, part: '3/3', payload: ' ' },
        { seq: 1, part: '1/2', payload: HEAD },
        // A repeat of what was read is no issue.
        { seq: 2, part: '2/2', payload: TAIL },
        { seq: 3, payload: text('three') },
      ],
      3,
    );
    expect(contents).toEqual(['one', 'two', 'three']);
    expect(issues.map((i) => [i.line, i.message])).toEqual([
      [
        2,
        expect.stringMatching(
          /^event 2 came as 2 parts, then as part 3\/3 .*; the event was read, this message is dropped$/,
        ),
      ],
      [
        1,
        expect.stringMatching(
          /^event 1 came as a whole event, then as part 1\/2 .*; the event was read, this message is dropped$/,
        ),
      ],
    ]);
  });

  it('counts the headers of the messages it holds against maxHeldBytes', async () => {
    // A hundred one-byte payloads, each with 60 KB of headers, ahead of a missing event 1: some 6 MB held.
    const padding = { 'EvoSci-Padding': 'x'.repeat(60_000) };
    const messages = Array.from({ length: 100 }, (_, i) => ({ seq: i + 2, payload: ' ', headers: padding }));
    await expect(
      lastValueFrom(fromJetStream(submitter, await written(messages, 101), { prefix, maxHeldBytes: 1024 * 1024 })),
    ).rejects.toThrow(/event 1 is missing from stream .* while \d+ later ones \(\d+ bytes, more than maxHeldBytes\)/);
  });

  it('says which parts of an event arrived, and what came instead of the rest', async () => {
    const stream = layout.eventsStream;
    const first = [
      { seq: 1, payload: text('one') },
      { seq: 2, part: '1/3', payload: HEAD },
      { seq: 2, part: '2/3', payload: TAIL },
    ];
    await expect(read(first, 2)).rejects.toThrow(
      `event 2 is missing part 3 of 3 from stream ${stream}: of its parts 1 to 2 arrived; after event 1 came the finished record (2 events)`,
    );
    const second = [...first.slice(0, 2), { seq: 2, part: '3/3', payload: ' ' }, { seq: 3, payload: text('three') }];
    await expect(read(second, 3)).rejects.toThrow(
      `event 2 is missing part 2 of 3 from stream ${stream}: of its parts 1, 3 arrived; after event 1 came event 3, then the finished record (3 events)`,
    );
  });
});
