// fromJetStream on its own: resuming from a position, payloads that are not
// events, repeats and out-of-order storage, consumers removed, errors as they
// were raised.
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { firstValueFrom, lastValueFrom, of, Subject, take, toArray } from 'rxjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import {
  CancelledError,
  DecodeError,
  EvoSciError,
  ExitError,
  SpawnError,
  TimeoutError,
  TruncatedStreamError,
} from '../../src/events/errors.js';
import { DecodeIssue } from '../../src/events/decode/decodeLine.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import {
  BrokerError,
  deserializeError,
  ensureStreams,
  fromJetStream,
  positionOf,
  publishTo,
  serializeError,
  type EventPosition,
} from '../../src/jetstream/index.js';
import { diagnostics, fixturePath } from '../support/collect.js';
import { BROKER, connectBroker, freePort, uniquePrefix, fixtureEvents, suiteStreams, writeByHand } from './support.js';

/** The shared broker's address as errors name it, for a pattern. */
const brokerPattern = BROKER.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const research = fixtureEvents('research-run.jsonl');

describe('fromJetStream', () => {
  const { prefix, layout, connection } = suiteStreams('consume');
  let nc: NatsConnection;
  beforeAll(() => {
    nc = connection();
  });
  const consumers = async () => (await jetstreamManager(nc)).consumers.list(layout.eventsStream).next();

  it('waits for a run that has not started, then replays and follows it', async () => {
    const remote = lastValueFrom(fromJetStream(nc, 'later-1', { prefix }).pipe(toArray()));
    // Its consumer on the server is the sign that it is waiting.
    while ((await consumers()).length === 0) await new Promise((r) => setImmediate(r));
    const local = await lastValueFrom(
      run({ prompt: 'x', ...fakeEvoSci([{ transcript: fixturePath('research-run.jsonl') }]) }).pipe(
        publishTo(nc, 'later-1', { prefix }),
        toArray(),
      ),
    );
    expect(local).toEqual(research);
    expect(await remote).toEqual(research);
    // Replayed later, the same again.
    expect(await lastValueFrom(fromJetStream(nc, 'later-1', { prefix }).pipe(toArray()))).toEqual(research);
  });

  it('resumes from the last position seen with no gap and no repeat, while the run is live, and removes its consumers', async () => {
    const source = new Subject<EvoEvent>();
    const publishing = lastValueFrom(source.pipe(publishTo(nc, 'resume-1', { prefix }), toArray()));
    const seen: EvoEvent[] = [];
    let position: EventPosition | undefined;
    let fed = 0;
    const feed = (n: number) => {
      for (const end = Math.min(research.length, fed + n); fed < end; fed++) source.next(research[fed]!);
    };
    feed(5);
    // Take a few at a time, unsubscribing after each batch; the run goes on being written meanwhile.
    for (const batch of [3, 4, 1, 7]) {
      const got = await firstValueFrom(
        fromJetStream(nc, 'resume-1', { prefix, ...(position ? { after: position } : {}) }).pipe(
          take(batch),
          toArray(),
        ),
      );
      seen.push(...got);
      position = positionOf(got.at(-1)!);
      feed(6);
    }
    feed(research.length);
    source.complete();
    await publishing;
    seen.push(...(await lastValueFrom(fromJetStream(nc, 'resume-1', { prefix, after: position! }).pipe(toArray()))));
    expect(seen).toEqual(research);
    // Removed as each subscription ends, which the server applies a moment later.
    while ((await consumers()).length > 0) await new Promise((r) => setImmediate(r));
  });

  it('passes on a note about an event it delivered as a note, numbered by the event', async () => {
    const { issues, onDiagnostic } = diagnostics();
    await writeByHand(
      nc,
      layout,
      'kept-1',
      [
        { seq: 1, payload: '{"type": "text", "content": "a"}' },
        { seq: 2, payload: '{"type": "tool_call", "id": "t1", "name": "n", "args": {"n": 12345678901234567890}}' },
        { seq: 3, payload: '{"type": "done", "content": "a", "response": "a"}' },
      ],
      3,
    );
    const events = await lastValueFrom(fromJetStream(nc, 'kept-1', { prefix, onDiagnostic }).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['text', 'tool_call', 'done']);
    expect(issues.map((i) => [i.line, i.kept])).toEqual([[2, true]]);
  });

  it('reports a payload that is not an event as a diagnostic and goes on', async () => {
    const { issues, onDiagnostic } = diagnostics();
    await writeByHand(
      nc,
      layout,
      'bad-1',
      [
        { seq: 1, payload: '{"type": "text", "content": "a"}\n' },
        { seq: 2, payload: 'not json at all' },
        { seq: 3, payload: '{"type": "tool_call", "name": 7}' },
        { payload: '{"type": "text", "content": "no header"}' },
        { seq: 4, payload: '{"type": "some_future_event", "x": 1}' },
        { seq: 5, payload: '{"type": "done", "content": "a", "response": "a"}' },
      ],
      5,
    );
    const events = await lastValueFrom(fromJetStream(nc, 'bad-1', { prefix, onDiagnostic }).pipe(toArray()));
    expect(events).toEqual([
      { type: 'text', content: 'a' },
      { type: 'done', content: 'a', response: 'a' },
    ]);
    expect(issues.map((i) => [i.line, i.message.split(':')[0]])).toEqual([
      [2, 'not JSON'],
      [3, 'tool_call'],
      [
        0,
        `message ${issues[2]!.message.match(/message (\d+)/)![1]} of stream ${layout.eventsStream} has no EvoSci-Seq header; dropped`,
      ],
    ]);
    expect(issues.every((i) => i instanceof DecodeIssue)).toBe(true);
    // strict makes the first a DecodeError, as fromJsonl does.
    await expect(lastValueFrom(fromJetStream(nc, 'bad-1', { prefix, strict: true }))).rejects.toBeInstanceOf(
      DecodeError,
    );
    // keepUnknown passes the unknown type on.
    const kept = await lastValueFrom(
      fromJetStream(nc, 'bad-1', { prefix, keepUnknown: true, onDiagnostic: () => undefined }).pipe(toArray()),
    );
    expect(kept.map((e) => (e.type === 'unknown' ? e.wireType : e.type))).toEqual([
      'text',
      'some_future_event',
      'done',
    ]);
  });

  it('reports a status message that is not a record as a diagnostic, or with strict ends the stream with it', async () => {
    await writeByHand(nc, layout, 'odd-status-1', [{ seq: 1, payload: '{"type": "text", "content": "a"}' }], 1, {
      afterStart: '{"record": "paused"}',
    });
    const { issues, onDiagnostic } = diagnostics();
    const events = await lastValueFrom(fromJetStream(nc, 'odd-status-1', { prefix, onDiagnostic }).pipe(toArray()));
    expect(events).toEqual([{ type: 'text', content: 'a' }]);
    expect(issues.map((i) => [i.line, i.raw, i.message.replace(/\d+/, 'N')])).toEqual([
      [0, '{"record": "paused"}', `message N of stream ${layout.eventsStream} is not a status record; dropped`],
    ]);
    const error = await lastValueFrom(fromJetStream(nc, 'odd-status-1', { prefix, strict: true })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as DecodeError).message).toContain('is not a status record');
  });

  it('emits a repeated or out-of-order stored event once, in its place', async () => {
    const line = (i: number) => `{"type": "text", "content": "${i}"}`;
    await writeByHand(
      nc,
      layout,
      'order-1',
      [1, 3, 2, 2, 1, 4, 6, 5].map((seq) => ({ seq, payload: line(seq) })),
      6,
    );
    const events = await lastValueFrom(fromJetStream(nc, 'order-1', { prefix }).pipe(toArray()));
    expect(events.map((e) => (e as { content: string }).content)).toEqual(['1', '2', '3', '4', '5', '6']);
    // Resuming from the position of event 2 (held behind 3) loses nothing.
    const rest = await lastValueFrom(
      fromJetStream(nc, 'order-1', { prefix, after: positionOf(events[1]!)! }).pipe(toArray()),
    );
    expect(rest.map((e) => (e as { content: string }).content)).toEqual(['3', '4', '5', '6']);
  });

  it('counts maxLineBytes in UTF-8 bytes, as fromJsonl does', async () => {
    const { issues, onDiagnostic } = diagnostics();
    // 40 characters of "é": 40 UTF-16 units, 80 bytes of UTF-8.
    const wide = `{"type": "text", "content": "${'é'.repeat(40)}"}`;
    await writeByHand(
      nc,
      layout,
      'utf8-1',
      [
        { seq: 1, payload: wide },
        { seq: 2, payload: '{"type": "text", "content": "ok"}' },
      ],
      2,
    );
    const maxLineBytes = wide.length + 10;
    const events = await lastValueFrom(
      fromJetStream(nc, 'utf8-1', { prefix, maxLineBytes, onDiagnostic }).pipe(toArray()),
    );
    expect(events).toEqual([{ type: 'text', content: 'ok' }]);
    expect(issues.map((i) => [i.line, i.message])).toEqual([
      [1, `line longer than maxLineBytes (${maxLineBytes}); dropped`],
    ]);
  });

  it('bounds the events held ahead of a missing one in bytes', async () => {
    const big = (i: number) => `{"type": "text", "content": "${String(i).repeat(2000)}"}`;
    await writeByHand(
      nc,
      layout,
      'held-1',
      [2, 3, 4, 5, 1].map((seq) => ({ seq, payload: big(seq) })),
      5,
    );
    // Four events of some 2 KB wait for the first: more than 5,000 bytes.
    await expect(lastValueFrom(fromJetStream(nc, 'held-1', { prefix, maxHeldBytes: 5000 }))).rejects.toThrow(
      /event 1 is missing from stream .* while 3 later ones \(\d+ bytes, more than maxHeldBytes\) arrived/,
    );
    const events = await lastValueFrom(fromJetStream(nc, 'held-1', { prefix }).pipe(toArray()));
    expect(events).toHaveLength(5);
  });

  it('errors at a finished record whose events are not all in the stream', async () => {
    await writeByHand(nc, layout, 'gap-1', [{ seq: 1, payload: '{"type": "text", "content": "1"}' }], 3);
    await expect(lastValueFrom(fromJetStream(nc, 'gap-1', { prefix }))).rejects.toThrow(/events 2 to 3 are missing/);
  });

  it('ends as the local run ended, with the same error class, message and details', async () => {
    const fake = fakeEvoSci([
      { transcript: fixturePath('error-run.jsonl') },
      { stderr: 'Error code: 529' },
      { resumeHint: 'abc12345' },
      { exit: 1 },
    ]);
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => new ExitError('completed'),
        (e: unknown) => e as ExitError,
      );
    const local = await failure(lastValueFrom(run({ prompt: 'x', ...fake }).pipe(publishTo(nc, 'fail-1', { prefix }))));
    const remote = await failure(lastValueFrom(fromJetStream(nc, 'fail-1', { prefix })));
    expect(remote).toBeInstanceOf(ExitError);
    expect(local).toBeInstanceOf(ExitError);
    for (const key of ['name', 'message', 'exitCode', 'signal', 'stderrTail', 'threadId'] as const)
      expect(remote[key]).toEqual(local[key]);
    expect(remote.threadId).toBe('abc12345');
  });

  it('rejects a run id that is not one subject token', () => {
    expect(() => fromJetStream(nc, 'a.b')).toThrow(TypeError);
    expect(() => publishTo(nc, 'a b')).toThrow(TypeError);
  });
});

describe('the terminal record’s error codec', () => {
  const issue = new DecodeIssue(4, '{"type": "text"}', 'text: at "content": expected string, got nothing');
  const errors: EvoSciError[] = [
    new SpawnError('could not start "EvoSci": ENOENT', { stderrTail: '' }),
    new ExitError('EvoSci exited with code 1: boom', { exitCode: 1, stderrTail: 'a\nb\n', threadId: 't1' }),
    new ExitError('EvoSci was killed by SIGKILL', { signal: 'SIGKILL' }),
    new TruncatedStreamError('EvoSci exited 0 without a done event', { exitCode: 0 }),
    new TimeoutError('run timed out after 10 ms', { stderrTail: 'x' }),
    new CancelledError('run aborted'),
    new DecodeError(issue, { exitCode: 0 }),
    new BrokerError('could not store'),
  ];
  it.each(errors.map((e) => [e.name, e] as const))(
    'gives %s back as the same class, message and details',
    (_, error) => {
      const back = deserializeError(JSON.parse(JSON.stringify(serializeError(error))), 'r');
      expect(back.constructor).toBe(error.constructor);
      for (const key of ['name', 'message', 'exitCode', 'signal', 'stderrTail', 'threadId'] as const)
        expect(back[key]).toEqual(error[key]);
      if (error instanceof DecodeError) expect((back as DecodeError).issue).toEqual(error.issue);
    },
  );
  it('keeps the class name of an error that is not an EvoSciError', () => {
    const back = deserializeError(serializeError(new TypeError('onDiagnostic broke')), 'r');
    expect(back).toBeInstanceOf(EvoSciError);
    expect(back.message).toBe('TypeError: onDiagnostic broke');
  });
});

describe('ensureStreams', () => {
  it('creates the streams once, with the documented defaults, and updates them on later calls', async () => {
    const nc = await connectBroker();
    const prefix = uniquePrefix('ensure');
    try {
      const layout = await ensureStreams(nc, { prefix });
      const again = await ensureStreams(nc, { prefix, eventsMaxAgeMs: 60_000 });
      expect(again).toMatchObject({ eventsStream: layout.eventsStream, requestsStream: layout.requestsStream });
      const jsm = await jetstreamManager(nc);
      const events = await jsm.streams.info(layout.eventsStream);
      const requests = await jsm.streams.info(layout.requestsStream);
      expect(events.config).toMatchObject({
        subjects: [`${prefix}.run.>`],
        retention: 'limits',
        storage: 'file',
        num_replicas: 1,
        max_age: 60_000 * 1e6,
      });
      expect(requests.config).toMatchObject({
        subjects: [`${prefix}.requests`],
        retention: 'workqueue',
        storage: 'file',
      });
      // The hubs' own stream keeps its secret for good.
      expect((await jsm.streams.info(layout.hubStream)).config).toMatchObject({
        subjects: [`${prefix}.hub.>`],
        retention: 'limits',
        storage: 'file',
        max_age: 0,
      });
      await jsm.streams.delete(layout.requestsStream);
      await jsm.streams.add({ name: layout.requestsStream, subjects: [`${prefix}.requests`] });
      await expect(ensureStreams(nc, { prefix })).rejects.toThrow(/exists with retention "limits", not "workqueue"/);
    } finally {
      const jsm = await jetstreamManager(nc);
      for (const s of ['EVENTS', 'REQUESTS', 'HUB'].map((name) => `${prefix.toUpperCase()}_${name}`))
        await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
    }
  });
});

describe('an unreachable broker', () => {
  it('fails to connect at once, naming the server', async () => {
    const port = await freePort();
    // Refused, not timed out: the answer is the server's absence, not a clock.
    await expect(connectBroker(`127.0.0.1:${port}`)).rejects.toThrow(
      new RegExp(`127\\.0\\.0\\.1:${port}.*(refused|ECONNREFUSED)`),
    );
  });

  it('fails publishTo and fromJetStream on a closed connection with a BrokerError at once', async () => {
    const nc = await connectBroker();
    await nc.close();
    const event = { type: 'text', content: 'a' } as const;
    await expect(lastValueFrom(of(event).pipe(publishTo(nc, 'closed-1')))).rejects.toThrow(
      new RegExp(`the connection to ${brokerPattern} is closed`),
    );
    const remote = await lastValueFrom(fromJetStream(nc, 'closed-1')).catch((e: unknown) => e);
    expect(remote).toBeInstanceOf(BrokerError);
  });

  it('fails a publish with a BrokerError naming the server once the retry time is spent', async () => {
    const nc = await connectBroker();
    const prefix = uniquePrefix('nostream');
    // No streams for this prefix: nothing answers the publishes.
    const error = await lastValueFrom(
      run({ prompt: 'x', ...fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]) }).pipe(
        publishTo(nc, 'lost-1', { prefix, retryForMs: 1000, ackTimeoutMs: 300 }),
      ),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokerError);
    expect((error as Error).message).toMatch(
      new RegExp(`could not store lost-1\\.1\\.started\\.[\\w-]+ on ${brokerPattern}`),
    );
    expect((error as Error).message).toMatch(/no ack within 1000 ms/);
    await expect(lastValueFrom(fromJetStream(nc, 'lost-1', { prefix }))).rejects.toThrow(/has ensureStreams run\?/);
    await nc.close();
  });
});
