// How a reader tells that its consumer is lost, and how it tries a broker call
// again, in virtual time: the heartbeats and checks of `ConsumerWatch`, the
// tries and the give-up of `ReadRetry`.
import { JetStreamApiError, type ConsumerNotification } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsumerWatch } from '../../src/jetstream/read/ConsumerWatch.js';
import { ReadRetry } from '../../src/jetstream/read/ReadRetry.js';
import { BrokerError } from '../../src/jetstream/wire/errors.js';

/** Notifications pushed by the test, as `ConsumerMessages.status()` yields them. */
function notifications(): { iterable: AsyncIterable<ConsumerNotification>; push(n: ConsumerNotification): void } {
  const queue: ConsumerNotification[] = [];
  let wake: (() => void) | undefined;
  return {
    push: (n) => {
      queue.push(n);
      wake?.();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (queue.length > 0) yield queue.shift()!;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    },
  };
}

const IDLE_MS = 5000;

describe('ConsumerWatch', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function watch(ahead: (from: number) => Promise<number | undefined>) {
    const lost: string[] = [];
    const notes = notifications();
    const watcher = new ConsumerWatch({ position: () => 10, ahead }, IDLE_MS, (why) => lost.push(why));
    watcher.start(notes.iterable);
    return { watcher, lost, notes };
  }

  it('takes the consumer for lost at the client word that two heartbeats were missed, once', async () => {
    const { lost, notes } = watch(() => Promise.resolve(undefined));
    notes.push({ type: 'heartbeat', lastConsumerSequence: 0, lastStreamSequence: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect(lost).toEqual([]);
    notes.push({ type: 'heartbeats_missed', count: 2 });
    notes.push({ type: 'heartbeats_missed', count: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(lost).toEqual(['missed 2 heartbeats 5000 ms apart: its server is away, or it is gone']);
  });

  it('takes an idle consumer for stuck when the leader holds a message for it at two checks in a row', async () => {
    const asked: number[] = [];
    const { lost } = watch((from) => {
      asked.push(from);
      return Promise.resolve(12);
    });
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(asked).toEqual([10]);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(lost).toEqual([
      "delivered nothing at two checks 5000 ms apart while the stream's leader holds message 12 for it: its replica is behind, or skipped it",
    ]);
  });

  it('leaves alone a consumer that delivers between checks, or one with nothing to deliver', async () => {
    const busy = watch(() => Promise.resolve(12));
    const idle = watch(() => Promise.resolve(undefined));
    for (let check = 0; check < 10; check++) {
      busy.watcher.delivered();
      await vi.advanceTimersByTimeAsync(IDLE_MS);
    }
    expect(busy.lost).toEqual([]);
    expect(idle.lost).toEqual([]);
  });

  it('asks nothing more once stopped', async () => {
    const ahead = vi.fn(() => Promise.resolve(12));
    const { watcher, lost, notes } = watch(ahead);
    watcher.stop();
    notes.push({ type: 'heartbeats_missed', count: 2 });
    await vi.advanceTimersByTimeAsync(10 * IDLE_MS);
    expect(ahead).not.toHaveBeenCalled();
    expect(lost).toEqual([]);
  });
});

describe('ReadRetry', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const nc = { isClosed: () => false, getServer: () => 'nats://127.0.0.1:4222' } as unknown as NatsConnection;
  const timeout = () => Object.assign(new Error('timeout'), { name: 'TimeoutError' });
  const noLeader = () =>
    new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
  const noStream = () => new JetStreamApiError({ code: 404, err_code: 10059, description: 'stream not found' });

  function retry(giveUpAfterMs: number) {
    const reports: string[] = [];
    const settings = {
      idleHeartbeatMs: IDLE_MS,
      giveUpAfterMs,
      onRetrying: (e: BrokerError) => reports.push(e.message),
    };
    return { retry: new ReadRetry(nc, settings), reports };
  }

  it('tries a call that got no answer, or no leader, again, saying so each time, until it answers', async () => {
    const { retry: r, reports } = retry(60_000);
    const failures = [timeout(), noLeader()];
    const answer = r.call(
      'could not read x',
      () => {
        const failure = failures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve('read');
      },
      () => true,
    );
    await vi.advanceTimersByTimeAsync(1000);
    await expect(answer).resolves.toBe('read');
    expect(reports).toEqual([
      'could not read x on nats://127.0.0.1:4222: timed out: no answer in time (a leader being elected, or a server away)',
      'could not read x on nats://127.0.0.1:4222: JetStream system temporarily unavailable: no leader (a leader being elected, or a server away)',
    ]);
  });

  it('fails at once, asking about ensureStreams, for a stream that is not there', async () => {
    const { retry: r, reports } = retry(60_000);
    await expect(
      r.call(
        'could not read x',
        () => Promise.reject(noStream()),
        () => true,
      ),
    ).rejects.toThrow('could not read x on nats://127.0.0.1:4222: stream not found (has ensureStreams run?)');
    expect(reports).toEqual([]);
  });

  it('gives up after giveUpAfterMs of tries with the last failure, and as soon as the reader stops', async () => {
    const { retry: r, reports } = retry(10_000);
    const given = r
      .call(
        'could not read x',
        () => Promise.reject(noLeader()),
        () => true,
      )
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(12_000);
    const error = (await given) as Error;
    expect(error).toBeInstanceOf(BrokerError);
    expect(error.message).toMatch(
      /no leader \(a leader being elected, or a server away\); gave up after 1\d{4} ms of tries$/,
    );
    // Tries at 0, 0.1, 0.3, 0.7, 1.5, 3.1, 5.1, 7.1 and 9.1 s are said; the one at 11.1 s gives up.
    expect(reports).toHaveLength(9);
    expect(error.message).toMatch(/gave up after 11100 ms/);
    let going = true;
    const stopped = r
      .call(
        'could not read x',
        () => Promise.reject(noLeader()),
        () => going,
      )
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    going = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(String(await stopped)).toMatch(/no leader/);
  });
});
