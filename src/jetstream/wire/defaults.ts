// Every default of the JetStream layer, written once: timings, sizes and limits.

const MIB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

export const DEFAULTS = {
  /** How long one publish waits for the stream's ack. */
  ackTimeoutMs: 5000,
  /**
   * How long a publish goes without an answer before it is sent again (same
   * `Nats-Msg-Id`): one lost in a leader change costs this, not `ackTimeoutMs`.
   */
  resendAfterMs: 1000,
  /**
   * Bytes of an attempt's last messages (256 at most) kept after their ack,
   * to be sent again if the stream lacks them when the attempt ends (a write
   * a leader change lost).
   */
  resendKeptBytes: 4 * MIB,
  /** How long a publish is retried (same `Nats-Msg-Id`) before it fails. */
  retryForMs: 30_000,
  /** Publishes of one attempt awaiting their ack at most. */
  maxPendingAcks: 256,
  /** Bytes of one attempt's events held while the broker is behind. */
  maxBufferBytes: 64 * MIB,
  /**
   * Bytes of events awaiting storage above which a writer given a
   * `FlowControl` pauses its source (and below half of which it resumes it),
   * at most half of `maxBufferBytes`.
   */
  highWaterBytes: 8 * MIB,
  /**
   * Bytes of publishes of one attempt awaiting their ack at most, past the
   * first: the parts of a large event wait their turn rather than queue on a
   * slow link past their ack timeout.
   */
  maxPendingBytes: 2 * MIB,
  /** Bytes of events a reader holds ahead of a missing one. */
  maxHeldBytes: 64 * MIB,
  /**
   * How often a reader's consumer shows it is alive while it has nothing to
   * deliver. Two missed, the consumer is taken for lost and made again; a
   * consumer idle that long while the stream's leader holds a message for it
   * is read again elsewhere.
   */
  idleHeartbeatMs: 5000,
  /**
   * How long a reader waits for a consumer to be made. A cluster puts a
   * reader's consumer on any server that holds the stream, one that is down
   * included, and then never answers: a short wait, and another try.
   */
  consumerCreateTimeoutMs: 2000,
  /** How long a reader tries to reach its stream again (a leader elected, a server back) before it errors. */
  readerGiveUpAfterMs: 60_000,
  /**
   * How long a request stays with a worker that stopped confirming it. Short,
   * because attempts are fenced: a worker wrongly thought dead only costs a
   * duplicate start, stopped at its next confirmation.
   */
  ackWaitMs: 10_000,
  /**
   * How long a worker's confirmation that it still runs a request waits for
   * the server's answer, at most (a third of `ackWaitMs` if less).
   */
  progressAnswerMs: 1000,
  /** How soon an unanswered confirmation is tried again (an election of the consumer's leader takes seconds). */
  progressRetryMs: 250,
  /** How long one pull for a request waits on the server; also the longest a worker's stop waits for it. */
  pullExpiresMs: 5000,
  /** How long a request a worker hands back (a failed broker call, no room) waits before it is delivered again. */
  retakeDelayMs: 1000,
  /** Runs at once in one worker. */
  concurrency: 1,
  /** Attempts of a run before it is dead-lettered. */
  maxAttempts: 3,
  /** How long events and status records are kept. */
  eventsMaxAgeMs: 7 * DAY_MS,
  /** How long a cancel (`cancelRun`, a hub's) waits for the run's end to be recorded: a CLI's SIGINT clean-up and kill ladder, or a dead worker's ack wait. */
  cancelTimeoutMs: 60_000,
  /** How long a `Nats-Msg-Id` is remembered. */
  duplicateWindowMs: 2 * 60 * 1000,
} as const;

/** Milliseconds as the nanoseconds of JetStream's configuration. */
export const nanos = (ms: number): number => Math.round(ms * 1_000_000);
