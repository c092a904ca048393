import { cutText } from '../common/cutText.js';

/** What every error of a run carries, whatever ended it. */
export interface EvoSciErrorDetails {
  /** The process's exit status, when it exited. */
  readonly exitCode?: number | undefined;
  /** The signal that killed the process, when one did. */
  readonly signal?: string | undefined;
  /** The last lines the process wrote to stderr, control characters removed. */
  readonly stderrTail?: string;
  /** The thread id from the producer's resume hint, for `RunOptions.resume`. */
  readonly threadId?: string | undefined;
  /** What the error came from, as `Error.cause`. */
  readonly cause?: unknown;
}

const TAIL_LINES_IN_MESSAGE = 8;

/**
 * The family's brand, from the global symbol registry: the same symbol in the
 * ESM and CommonJS builds, in two copies of the package and in every realm of
 * the process, where each has its own classes.
 */
const BRAND = Symbol.for('evosci-rx.EvoSciError');

/** Whether `value` is an error of this family, from whichever build or realm made it. */
function isBranded(value: unknown): value is EvoSciError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
}

/**
 * The base of every error this library raises. Catch it to handle any failed
 * run; test `instanceof` a subclass for the cause. Each class sets its
 * `name` on its prototype, written out so that it survives minifiers and is
 * in the stack trace from the start.
 *
 * `instanceof` also holds for an error made by another copy of the library
 * (the other build, another realm): the family is recognised by a brand,
 * and a subclass by its name along the error's prototype chain.
 * `EvoSciError.is(value)` says the same for the whole family.
 */
export class EvoSciError extends Error {
  static {
    this.prototype.name = 'EvoSciError';
    Object.defineProperty(this.prototype, BRAND, { value: true });
  }

  /** Whether `value` is an error of this family, made by any copy of the library. */
  static is(value: unknown): value is EvoSciError {
    return isBranded(value);
  }

  /** `instanceof`: true for an error of this class made by any copy of the library (see the class). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!isBranded(value)) return false;
    if (this === EvoSciError) return true;
    const name = (this as { prototype: Error }).prototype.name;
    for (let p: unknown = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
      if (p === this.prototype || (Object.hasOwn(p as object, 'name') && (p as Error).name === name)) return true;
    }
    return false;
  }

  /** The message without the stderr lines `message` ends with: what the error says in one line. */
  readonly shortMessage: string;
  /** The process's exit status; `undefined` when it did not exit with one (a signal, no process). */
  readonly exitCode: number | undefined;
  /** The signal that killed the process (`SIGINT`, …), if one did. */
  readonly signal: string | undefined;
  /** The last characters the process wrote to stderr (`stderrTailChars`), control characters removed; `''` when none. */
  readonly stderrTail: string;
  /** The thread id the producer printed as it exited, for `RunOptions.resume`. */
  readonly threadId: string | undefined;

  constructor(message: string, details: EvoSciErrorDetails = {}) {
    const tail = details.stderrTail ?? '';
    const lastLines = tail.trimEnd().split('\n').slice(-TAIL_LINES_IN_MESSAGE).join('\n');
    super(lastLines ? `${message}\n--- last stderr lines ---\n${lastLines}` : message, { cause: details.cause });
    this.shortMessage = message;
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
    // A string of its own (see cutText), or a 50 MB bad line stays alive.
    this.raw = cutText(raw, RAW_LIMIT);
  }

  /** `line N: message`. */
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
    /** The line that did not decode, and why. */
    readonly issue: DecodeIssue,
    details: EvoSciErrorDetails = {},
  ) {
    super(`bad line in stream-json output: ${issue.toString()}`, details);
  }
}

/** A run error's class: the message and details it was made with. */
type RunErrorClass = new (message: string, details?: EvoSciErrorDetails) => EvoSciError;

/** The run errors made from a message and details, by class name. */
const RUN_ERROR_CLASSES: Readonly<Record<string, RunErrorClass>> = {
  EvoSciError,
  SpawnError,
  ExitError,
  TruncatedStreamError,
  TimeoutError,
  CancelledError,
};

/**
 * A run's error come back from the wire (a status record, a hub's `end`
 * event): the same class where this library has it (`more` adds a layer's
 * own), else an `EvoSciError` whose message starts with the class name.
 */
export function runErrorOf(
  name: string,
  message: string,
  details: EvoSciErrorDetails,
  more: Readonly<Record<string, RunErrorClass>> = {},
): EvoSciError {
  // The name comes from the wire: only a table's own entries count, never `constructor` or `__proto__`.
  const Class = Object.hasOwn(more, name)
    ? more[name]
    : Object.hasOwn(RUN_ERROR_CLASSES, name)
      ? RUN_ERROR_CLASSES[name]
      : undefined;
  return Class ? new Class(message, details) : new EvoSciError(`${name}: ${message}`, details);
}
