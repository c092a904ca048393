/** What every error of a run carries, whatever ended it. */
export interface EvoSciErrorDetails {
  readonly exitCode?: number | undefined;
  readonly signal?: string | undefined;
  /** The last lines the process wrote to stderr, control characters removed. */
  readonly stderrTail?: string;
  /** The thread id from the producer's resume hint, for `RunOptions.resume`. */
  readonly threadId?: string | undefined;
  readonly cause?: unknown;
}

const TAIL_LINES_IN_MESSAGE = 8;

/**
 * The base of every error this library raises. Catch it to handle any failed
 * run; test `instanceof` a subclass for the cause. Each class sets its
 * `name` on its prototype, written out so that it survives minifiers and is
 * in the stack trace from the start.
 */
export class EvoSciError extends Error {
  static {
    this.prototype.name = 'EvoSciError';
  }
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly stderrTail: string;
  readonly threadId: string | undefined;

  constructor(message: string, details: EvoSciErrorDetails = {}) {
    const tail = details.stderrTail ?? '';
    const lastLines = tail.trimEnd().split('\n').slice(-TAIL_LINES_IN_MESSAGE).join('\n');
    super(lastLines ? `${message}\n--- last stderr lines ---\n${lastLines}` : message, { cause: details.cause });
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderrTail = tail;
    this.threadId = details.threadId;
  }
}

/** The process could not be started: missing binary, not executable, bad `cwd`, an argument too long. */
export class SpawnError extends EvoSciError {
  static {
    this.prototype.name = 'SpawnError';
  }
}

/** The process exited with a non-zero status or was killed by a signal. */
export class ExitError extends EvoSciError {
  static {
    this.prototype.name = 'ExitError';
  }
}

/** The process exited 0 without sending a `done` event. */
export class TruncatedStreamError extends EvoSciError {
  static {
    this.prototype.name = 'TruncatedStreamError';
  }
}

/** `timeoutMs` elapsed before the run ended; the process was stopped. */
export class TimeoutError extends EvoSciError {
  static {
    this.prototype.name = 'TimeoutError';
  }
}

/** `RunOptions.signal` was aborted; the process was stopped. The abort reason is the `cause`. */
export class CancelledError extends EvoSciError {
  static {
    this.prototype.name = 'CancelledError';
  }
}

/** How much of a bad line a `DecodeIssue` keeps, so a huge bad line cannot pin memory. */
const RAW_LIMIT = 300;

/**
 * A line of the stream that did not decode to an event (not JSON, not an
 * object, no string `type`, a known type with the wrong shape, longer than
 * `maxLineBytes`), or one that did but lost something on the way (`kept`:
 * an integer beyond ±2^53 was rounded). Reported through `onDiagnostic`;
 * decoding goes on.
 */
export class DecodeIssue {
  /** The start of the line, cut to a few hundred characters. */
  readonly raw: string;

  constructor(
    /** 1-based line number in the stream, counting blank lines. */
    readonly line: number,
    raw: string,
    /** What is wrong, with the io-ts path of each failing field for a wrong shape. */
    readonly message: string,
    /** The line's event was still delivered: a note about it, never a `strict` error. */
    readonly kept = false,
  ) {
    this.raw = raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw;
  }

  toString(): string {
    return `line ${this.line}: ${this.message}`;
  }
}

/** A line did not decode and `strict: true` was set. */
export class DecodeError extends EvoSciError {
  static {
    this.prototype.name = 'DecodeError';
  }

  constructor(
    readonly issue: DecodeIssue,
    details: EvoSciErrorDetails = {},
  ) {
    super(`bad line in stream-json output: ${issue.toString()}`, details);
  }
}
