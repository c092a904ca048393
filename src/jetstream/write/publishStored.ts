import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import { AckCollector, isStored, StoreRefusal } from './acks.js';
import { DEFAULTS } from '../wire/defaults.js';
import { BrokerError, StatusMovedError } from '../wire/errors.js';
import { clientsOf, serverOf } from '../wire/clients.js';
import { doubling, lasting, pause } from '../wire/backoff.js';

/** What a publish needs besides its payload. */
export interface PublishTarget {
  readonly subject: string;
  readonly msgID: string;
  readonly headers: Record<string, string>;
  /** Store only while this is the last sequence of the subject (0: the subject has none). */
  readonly expectLastSequence?: number;
}

/** How long one publish waits for its ack, and for how long it is tried again. */
export interface PublishTiming {
  /** How long the first try waits for a stored ack, re-sends included, before the slower retries. */
  readonly ackTimeoutMs: number;
  /** How long a publish is tried in all before it fails. */
  readonly retryForMs: number;
  /** How long a publish goes without an answer before it is sent again. Default `DEFAULTS.resendAfterMs`. */
  readonly resendAfterMs?: number;
}

/** The header JetStream de-duplicates on. */
const MSG_ID = 'Nats-Msg-Id';
/** The header that makes a publish conditional on the last sequence of its subject. */
const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';
/** JetStream's error code for a conditional publish whose subject has moved on. */
const WRONG_LAST_SEQUENCE = 10071;

function isWrongLastSequence(err: unknown): boolean {
  return (err instanceof StoreRefusal || err instanceof JetStreamApiError) && err.code === WRONG_LAST_SEQUENCE;
}

/**
 * Stores one message, retrying on timeouts and while the broker is away with
 * the same `Nats-Msg-Id` (the stream drops a repeat within its duplicate
 * window), until `retryForMs` has passed. A publish lost in a leader change
 * is sent again within `resendAfterMs`, or as soon as a later one on its
 * subject is stored; a duplicate ack at sequence 0 (the id still being
 * proposed) is not taken for stored. A closed connection or an answer
 * that will not change (a JetStream API error, a payload over the server's
 * limit) fails at once; a conditional publish whose subject moved on fails
 * with `StatusMovedError`. A retry after a lost ack is answered as a
 * duplicate before the condition is checked, so that error always means
 * another writer's message.
 */
export function publishStored(
  nc: NatsConnection,
  target: PublishTarget,
  data: Uint8Array,
  timing: PublishTiming,
): Promise<PubAck> {
  const h = headers();
  for (const name in target.headers) h.set(name, target.headers[name]!);
  h.set(MSG_ID, target.msgID);
  if (target.expectLastSequence !== undefined) h.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(target.expectLastSequence));
  // Most publishes succeed at once: only a failure enters the retry loop, through the client's own js.publish.
  let first: Promise<PubAck>;
  try {
    first = AckCollector.of(nc).publish(target.subject, data, h, {
      timeoutMs: timing.ackTimeoutMs,
      resendAfterMs: timing.resendAfterMs ?? DEFAULTS.resendAfterMs,
    });
  } catch (err) {
    // A closed connection cannot even subscribe: fail as a promise, like every other failure.
    first = Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  return first.catch((err: unknown) => new Retry(nc, target, data, h, timing).run(err));
}

/** The slow path of `publishStored`: wait, publish again, until it is stored or cannot be. */
class Retry {
  private readonly deadline: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly target: PublishTarget,
    private readonly data: Uint8Array,
    private readonly headers: MsgHdrs,
    private readonly timing: PublishTiming,
  ) {
    this.deadline = Date.now() + timing.retryForMs;
  }

  async run(firstFailure: unknown): Promise<PubAck> {
    let err = firstFailure;
    // The stream's own refusal: ask once more through the client, which says exactly why.
    if (firstFailure instanceof StoreRefusal && !isWrongLastSequence(firstFailure)) {
      try {
        return await this.publish();
      } catch (failure) {
        err = failure;
      }
    }
    const delays = doubling(50, 1000);
    for (;;) {
      const delay = delays.next().value;
      this.giveUpOn(err, delay);
      await pause(delay);
      try {
        return await this.publish();
      } catch (failure) {
        err = failure;
      }
    }
  }

  private async publish(): Promise<PubAck> {
    const ack = await clientsOf(this.nc).js.publish(this.target.subject, this.data, {
      msgID: this.target.msgID,
      headers: this.headers,
      timeout: this.timing.ackTimeoutMs,
    });
    if (!isStored(ack)) throw new Error(`${this.target.msgID} is still being proposed (a duplicate at sequence 0)`);
    return ack;
  }

  /** Throws when `err` will not change, or when waiting `delay` more would pass the deadline. */
  private giveUpOn(err: unknown, delay: number): void {
    const { target, nc } = this;
    if (isWrongLastSequence(err)) {
      throw new StatusMovedError(`${target.subject} moved past ${target.expectLastSequence}`, { cause: err });
    }
    const message = (err as Error)?.message ?? String(err);
    if (nc.isClosed()) {
      throw new BrokerError(`could not store ${target.msgID}: the connection to ${serverOf(nc)} is closed`, {
        cause: err,
      });
    }
    // A permission the connection's user lacks will not come by retrying; a leader JetStream is electing will.
    const permanent = lasting(err);
    if (permanent || Date.now() + delay > this.deadline) {
      const why = permanent ? message : `no ack within ${this.timing.retryForMs} ms (${message})`;
      throw new BrokerError(`could not store ${target.msgID} on ${serverOf(nc)} in subject ${target.subject}: ${why}`, {
        cause: err,
      });
    }
  }
}
