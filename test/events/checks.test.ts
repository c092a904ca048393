// Every option is checked where it enters, and every mistake is said one way:
// `fn: name must be …, got …`, a TypeError naming the call and the option.
import { connect } from '@nats-io/transport-node';
import { of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachEvent, followRun, fromJsonl, toSseStream } from '../../src/index.js';
import { cancelRun, fromJetStream, jetStreamRunHub, publishTo, serveRuns } from '../../src/jetstream/index.js';
import { run } from '../../src/process/run.js';
import { runHub } from '../../src/runs/index.js';
import { natsUrl } from '../support/natsServer.js';

const FORM = /^(\w+): ([\w.]+) must be (.+), got (.+)$/;

/** The message of the TypeError `call` throws or rejects with. */
async function mistake(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as TypeError).message;
  }
  throw new Error('no mistake was found');
}

describe('the checks of options', () => {
  let nc: Awaited<ReturnType<typeof connect>>;
  beforeAll(async () => {
    nc = await connect({ servers: natsUrl() });
  });
  afterAll(async () => {
    await nc?.close();
  });

  it('say each mistake as `fn: name must be …, got …`', async () => {
    const cases: [string, () => unknown][] = [
      ['run: timeoutMs', () => run({ prompt: 'x', timeoutMs: -1 })],
      ['run: stderrTailChars', () => run({ prompt: 'x', stderrTailChars: 0 })],
      ['fromJsonl: maxLineBytes', () => fromJsonl('', { maxLineBytes: 0 })],
      ['eachEvent: highWaterMark', () => eachEvent(of(1), { highWaterMark: 1.5 })],
      ['toSseStream: heartbeatMs', () => toSseStream(of(), { heartbeatMs: 0 })],
      ['followRun: retryDelayMs', () => followRun('http://127.0.0.1:9/runs/x', { retryDelayMs: -1 })],
      ['runHub: maxLive', () => runHub({ maxLive: 0 })],
      ['serveRuns: concurrency', () => serveRuns(nc, { concurrency: 0 })],
      ['serveRuns: publish.maxRunBytes', () => serveRuns(nc, { publish: { maxRunBytes: 0 } })],
      ['publishTo: maxBufferBytes', () => publishTo(nc, 'r1', { maxBufferBytes: 0 })],
      ['fromJetStream: maxHeldBytes', () => fromJetStream(nc, 'r1', { maxHeldBytes: -1 })],
      ['jetStreamRunHub: maxQueued', () => jetStreamRunHub(nc, { maxQueued: 0 })],
      ['cancelRun: timeoutMs', () => cancelRun(nc, 'r1', { timeoutMs: 0 })],
    ];
    for (const [named, call] of cases) {
      const message = await mistake(call);
      expect(message).toMatch(FORM);
      expect(message.startsWith(`${named} must be`)).toBe(true);
    }
  });
});
