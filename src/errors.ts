import type { DecodeIssue } from './decode/decodeLine.js';

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
