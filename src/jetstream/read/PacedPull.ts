// A reader whose consumer of its output can wait (an HTTP response, through
// its `FlowControl`) pulls from its consumer one batch at a time, asking for
// the next only while its tap is open: a reader that stops reading stops the
// broker sending, instead of the run piling up in this process for it. The
// client's `consume()` asks for more as messages arrive, whoever reads them.
import type { Consumer, ConsumerMessages, ConsumerNotification, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { FlowControl } from '../../common/FlowControl.js';

/**
 * Messages one pull asks for. A pull asked for before its reader paused is
 * taken whole, so what a paused reader's source hands on past the pause (an
 * HTTP reader's 64 KiB of frames) is at most one pull: 128 messages, each at
 * most an event's 16 KiB part and its headers as this library's writers send
 * them (some 2.5 MiB), a few tens of KiB for a run of small events.
 */
export const PACED_PULL_MESSAGES = 128;

/** Where a paced pull's messages and notifications go, and what it says when its consumer fails it. */
export interface PacedTarget {
  /** Each message, in order. */
  readonly onMessage: (message: JsMsg) => void;
  /** The notifications of each pull (heartbeats, and heartbeats missed), for the reader's watch. */
  readonly onPull: (notifications: AsyncIterable<ConsumerNotification>) => void;
  /** A pull failed other than by the connection closing: the consumer may be gone (deleted while idle, say). */
  readonly onLost: (why: string) => void;
}

/** How long a pull waits for messages, and the heartbeats it asks for meanwhile. */
export interface PullTiming {
  readonly expires: number;
  readonly idleHeartbeatMs: number;
}

/** What reading a consumer gives: how it ends (the connection closed), and how to stop it. */
export type Pulled = Pick<ConsumerMessages, 'close' | 'closed'>;

/**
 * The messages of `consumer`, each to `target.onMessage`: pulled as they come
 * (`consume()`, up to 1,000 asked for at a time), or, with a `flow`, one pull
 * at a time while it is not paused.
 */
export async function pullMessages(
  nc: NatsConnection,
  consumer: Consumer,
  timing: PullTiming,
  flow: FlowControl | undefined,
  target: PacedTarget,
): Promise<Pulled> {
  if (flow) return PacedPull.start(nc, consumer, timing, flow, target);
  const messages = await consumer.consume({
    // Larger pulls than the client's 100: a live run arrives in bursts, and each pull is a round trip.
    max_messages: 1000,
    idle_heartbeat: timing.idleHeartbeatMs,
    expires: timing.expires,
    callback: target.onMessage,
  });
  target.onPull(messages.status());
  return messages;
}

/**
 * The messages of one ordered consumer, pulled `PACED_PULL_MESSAGES` at a
 * time, the next pull asked for once the last is done and `flow` is not
 * paused. A consumer paused longer than its inactivity threshold is gone when
 * its reader resumes: its next pull is not answered, which the reader's
 * `ConsumerWatch` takes for a lost consumer, as it would for `consume()`; a
 * pull that fails is said to `onLost`. It ends only by `close()` or when the
 * connection closes (`closed()`), as `consume()` does.
 */
export class PacedPull {
  private stopped = false;
  private pull: ConsumerMessages | undefined;
  /** Stops waiting for the flow to resume. */
  private stopWaiting: (() => void) | undefined;
  private readonly ended: Promise<Error | undefined>;
  private settle!: (error: Error | undefined) => void;

  /** Starts pulling from `consumer`, at once unless `flow` is paused. */
  static start(
    nc: NatsConnection,
    consumer: Consumer,
    timing: PullTiming,
    flow: FlowControl,
    target: PacedTarget,
  ): PacedPull {
    const paced = new PacedPull(nc, consumer, timing, flow, target);
    void paced.run();
    return paced;
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly consumer: Consumer,
    private readonly timing: PullTiming,
    private readonly flow: FlowControl,
    private readonly target: PacedTarget,
  ) {
    this.ended = new Promise((resolve) => (this.settle = resolve));
  }

  /** Resolves once pulling stopped: by `close()`, or with the error, if any, of the connection closing. */
  closed(): Promise<Error | undefined> {
    return this.ended;
  }

  /** Stops pulling; a pull under way is let go. */
  close(): Promise<Error | undefined> {
    this.stop(undefined);
    void this.pull?.close().catch(() => undefined);
    return this.ended;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.resumed();
      if (this.stopped) return;
      const failure = await this.pullOnce().then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
      if (this.stopped) return;
      if (this.nc.isClosed()) return this.stop(failure);
      if (failure === undefined) continue;
      this.stop(undefined);
      return this.target.onLost(`failed a pull: ${failure.message}`);
    }
  }

  /** One pull, its messages handed on as they come, even once paused: the broker sends what it was asked for. */
  private async pullOnce(): Promise<void> {
    const { expires, idleHeartbeatMs } = this.timing;
    const pull = await this.consumer.fetch({
      max_messages: PACED_PULL_MESSAGES,
      expires,
      idle_heartbeat: idleHeartbeatMs,
    });
    this.pull = pull;
    if (this.stopped) return void pull.stop();
    this.target.onPull(pull.status());
    for await (const message of pull) {
      if (this.stopped) break;
      this.target.onMessage(message);
    }
  }

  /** Resolves at once when the flow is open, else when it opens again or pulling stops. */
  private resumed(): Promise<void> {
    if (!this.flow.paused) return Promise.resolve();
    return new Promise((resolve) => {
      const unwatch = this.flow.watch((paused) => {
        if (!paused) this.stopWaiting?.();
      });
      this.stopWaiting = () => {
        this.stopWaiting = undefined;
        unwatch();
        resolve();
      };
    });
  }

  private stop(error: Error | undefined): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopWaiting?.();
    this.settle(error);
  }
}
