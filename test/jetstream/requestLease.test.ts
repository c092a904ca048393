// A worker's lease on a request, in virtual time: each confirmation awaits
// the server's answer, and one left unanswered (the workers' consumer is
// electing a leader) is tried again at short intervals and reported, so that
// the new leader hears of the worker well within the ack wait.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestLease, type LeasedDelivery } from '../../src/jetstream/worker/RequestLease.js';

const TIMING = { heartbeatMs: 2000, answerMs: 1000, retryMs: 250 };

/** The consumer's side of a delivery: a leader answers a confirmation at once; without one, none is answered. */
class ConsumerSide implements LeasedDelivery {
  /** `answer`: a leader; `refuse`: no responders (no server holds the consumer); `silent`: no answer at all. */
  mode: 'answer' | 'refuse' | 'silent' = 'answer';
  /** When a confirmation reached a leader. */
  readonly heard: number[] = [];
  readonly tries: number[] = [];
  readonly sent: string[] = [];

  confirmWorking(timeoutMs: number): Promise<void> {
    this.tries.push(Date.now());
    if (this.mode === 'answer') {
      this.heard.push(Date.now());
      return Promise.resolve();
    }
    if (this.mode === 'refuse') return Promise.reject(new Error('503 no responders'));
    return new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs));
  }

  working(): void {
    this.sent.push('+WPI');
  }

  ackAck(): Promise<void> {
    this.sent.push('+ACK');
    return Promise.resolve();
  }

  nak(): void {
    this.sent.push('-NAK');
  }
}

describe('RequestLease', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  const lease = (delivery: LeasedDelivery) => {
    const beats: number[] = [];
    const unconfirmed: { at: number; forMs: number; error: string }[] = [];
    const held = new RequestLease(delivery, TIMING, {
      onBeat: () => beats.push(Date.now()),
      onUnconfirmed: (error, forMs) => unconfirmed.push({ at: Date.now(), forMs, error: (error as Error).message }),
    });
    return { held, beats, unconfirmed };
  };

  it('confirms every heartbeat while the server answers, and reports nothing', async () => {
    const side = new ConsumerSide();
    const { held, beats, unconfirmed } = lease(side);
    await vi.advanceTimersByTimeAsync(7000);
    expect(side.heard).toEqual([2000, 4000, 6000]);
    expect(beats).toEqual([2000, 4000, 6000]);
    expect(unconfirmed).toEqual([]);
    held.release();
  });

  it('tries again every retryMs while the consumer has no leader, reports each try, and goes back to its heartbeat', async () => {
    const side = new ConsumerSide();
    const { held, beats, unconfirmed } = lease(side);
    await vi.advanceTimersByTimeAsync(2500);
    // The leader dies at 2.5 s; a new one answers from 5.1 s.
    side.mode = 'refuse';
    await vi.advanceTimersByTimeAsync(2600);
    side.mode = 'answer';
    await vi.advanceTimersByTimeAsync(4000);
    expect(unconfirmed).toEqual(
      [4000, 4250, 4500, 4750, 5000].map((at) => ({ at, forMs: at - 2000, error: '503 no responders' })),
    );
    expect(side.heard).toEqual([2000, 5250, 7250]);
    // Beats (the check for a superseding attempt) keep the heartbeat, not the tries.
    expect(beats).toEqual([2000, 4000, 7250]);
    held.release();
  });

  it('waits answerMs for an answer that does not come, then tries again: the new leader hears within a try', async () => {
    const side = new ConsumerSide();
    const { held, unconfirmed } = lease(side);
    await vi.advanceTimersByTimeAsync(1000);
    side.mode = 'silent';
    await vi.advanceTimersByTimeAsync(4000);
    // Tries at 2000, 3250, 4500 (each 1 s unanswered, then 250 ms): unanswered until 5 s.
    expect(side.tries).toEqual([2000, 3250, 4500]);
    expect(unconfirmed.map((u) => [u.at, u.forMs])).toEqual([
      [3000, 3000],
      [4250, 4250],
    ]);
    side.mode = 'answer';
    await vi.advanceTimersByTimeAsync(1000);
    // The try that went out at 4.5 s timed out at 5.5 s; the next, at 5.75 s, is answered.
    expect(side.heard).toEqual([5750]);
    expect(unconfirmed.at(-1)).toMatchObject({ at: 5500, forMs: 5500, error: 'timeout' });
    held.release();
  });

  it('keeps beating at its heartbeat while no confirmation is answered, so the run still checks for a cancel', async () => {
    const side = new ConsumerSide();
    side.mode = 'silent';
    const { held, beats } = lease(side);
    await vi.advanceTimersByTimeAsync(10_000);
    // A beat at 2 s; its try and the next go unanswered (1 s each, 250 ms apart), and the beat due comes with the next try.
    expect(beats).toEqual([2000, 4500, 7000, 9500]);
    held.release();
  });

  it('confirms through the latest delivery once it adopts one', async () => {
    const first = new ConsumerSide();
    const second = new ConsumerSide();
    const { held } = lease(first);
    await vi.advanceTimersByTimeAsync(2100);
    held.adopt(second);
    expect(second.sent).toEqual(['+WPI']);
    await vi.advanceTimersByTimeAsync(2000);
    expect(first.heard).toEqual([2000]);
    expect(second.heard).toEqual([4000]);
    held.release();
  });

  it('stops confirming, and reporting, once it acknowledges, hands back or releases the request', async () => {
    for (const end of ['ack', 'nak', 'release'] as const) {
      vi.setSystemTime(0);
      const side = new ConsumerSide();
      side.mode = 'silent';
      const { held, unconfirmed } = lease(side);
      await vi.advanceTimersByTimeAsync(2500);
      held[end]();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(side.tries).toEqual([2000]);
      expect(unconfirmed).toEqual([]);
      expect(side.sent).toEqual(end === 'ack' ? ['+ACK'] : end === 'nak' ? ['-NAK'] : []);
    }
  });
});
