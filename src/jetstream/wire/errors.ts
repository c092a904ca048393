import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { EvoSciError, type EvoSciErrorDetails } from '../../events/errors.js';
import { serverOf } from './clients.js';
import { UNAVAILABLE } from './backoff.js';

/**
 * The attempt a consumer was following was replaced by a newer one: its
 * worker died or stopped, and the request was delivered again. The events
 * already emitted were a half run; resubscribing follows the new attempt
 * from its start.
 */
export class AttemptSupersededError extends EvoSciError {
  static {
    this.prototype.name = 'AttemptSupersededError';
  }

  constructor(
    /** The run followed. */
    readonly runId: string,
    /** The attempt the reader was following. */
    readonly attempt: number,
    /** The attempt that replaced it: subscribing again follows this one from its start. */
    readonly nextAttempt: number,
    details: EvoSciErrorDetails = {},
  ) {
    super(
      `run ${runId}: attempt ${attempt} was abandoned and attempt ${nextAttempt} started; resubscribe to follow it`,
      details,
    );
  }
}

/** The run will not be run: its request was bad, or every attempt's worker died. `reason` says which. */
export class DeadLetterError extends EvoSciError {
  static {
    this.prototype.name = 'DeadLetterError';
  }

  constructor(
    /** The run that will not be run. */
    readonly runId: string,
    /** Why: a bad request (naming what was wrong), or the attempts spent. */
    readonly reason: string,
    /** The attempts started before it was dead-lettered. */
    readonly attempts: number,
  ) {
    super(`run ${runId} was dead-lettered: ${reason}`);
  }
}

/** JetStream could not be used: unreachable or closed connection, a missing stream, a publish that never got its ack. */
export class BrokerError extends EvoSciError {
  static {
    this.prototype.name = 'BrokerError';
  }
}

/**
 * A run met a limit on what it may store, and was stopped rather than left
 * to lose records silently: the events stream is full (`eventsMaxBytes`: it
 * refuses new messages and removes nothing for room), the run would outlive
 * the stream's `eventsMaxAgeMs` (its start would be removed while it runs),
 * its start was removed all the same, or its events passed the writer's
 * `maxRunBytes`. The message names the limit and its value.
 */
export class StorageLimitError extends BrokerError {
  static {
    this.prototype.name = 'StorageLimitError';
  }
}

/**
 * A status record was refused because another was stored on the run's status
 * subject after the one its writer read (`Nats-Expected-Last-Subject-Sequence`):
 * the writer's attempt is no longer the run's current one. Internal: callers
 * turn it into what their user sees.
 */
export class StatusMovedError extends Error {
  static {
    this.prototype.name = 'StatusMovedError';
  }
}

/** A JetStream API answer of 404: no such stream, consumer or message. */
export function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}

/** JetStream's error code for a stream that does not exist. */
const STREAM_NOT_FOUND = 10059;

/** The first JetStream API error among `err` and its causes. */
function apiErrorOf(err: unknown): JetStreamApiError | undefined {
  for (let cause = err; cause instanceof Error; cause = cause.cause)
    if (cause instanceof JetStreamApiError) return cause;
  return undefined;
}

/** Whether JetStream answered that the stream does not exist (not: that it did not answer in time). */
export function isStreamNotFound(err: unknown): boolean {
  return apiErrorOf(err)?.code === STREAM_NOT_FOUND;
}

/**
 * Why a lookup of a stream (or of its consumer, or a message in it) failed,
 * in words that send the operator the right way: a stream that does not exist
 * asks whether `ensureStreams` ran; no answer in time, or an answer that the
 * stream has no leader, says so, for that is an election or a server away.
 */
export function lookupError(nc: NatsConnection, what: string, cause: unknown): BrokerError {
  const message = (cause as Error)?.message ?? String(cause);
  const code = apiErrorOf(cause)?.code;
  let why = message;
  if (code === STREAM_NOT_FOUND) why = `${message} (has ensureStreams run?)`;
  else if (code === UNAVAILABLE) why = `${message}: no leader (a leader being elected, or a server away)`;
  else if ((cause as Error)?.name === 'TimeoutError')
    why = 'timed out: no answer in time (a leader being elected, or a server away)';
  return new BrokerError(`${what} on ${serverOf(nc)}: ${why}`, { cause });
}

/** A `BrokerError` saying what failed, on which server, and why. */
export function brokerError(nc: NatsConnection, what: string, cause: unknown): BrokerError {
  return new BrokerError(`${what} on ${serverOf(nc)}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
}
