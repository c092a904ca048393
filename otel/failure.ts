import { SpanStatusCode, type Exception, type Span } from '@opentelemetry/api';
import { EvoSciError } from '../src/events/errors.js';
import type { ContentPolicy } from './content.js';
import { AttributeName, ErrorType } from './conventions.js';

/** An error message on a span status: enough to recognise it, never a whole stderr. */
const MAX_STATUS_MESSAGE = 1024;

/** How a failure shows on a span: its `error.type`, its status message, and the exception recorded, if any. */
export interface Failure {
  readonly type: string;
  readonly message: string;
  readonly exception?: Exception;
}

/** A run unsubscribed before its `done`. */
export const CANCELLED: Failure = { type: ErrorType.cancelled, message: 'unsubscribed before the run ended' };

/**
 * The failure of a run whose Observable errored with `error`. An error of a
 * run ends with the process's last stderr lines, and stderr is content (a
 * traceback quotes the prompt, a tool's output, a key): unless content is
 * captured, the span keeps the error's class and its one-line message, and
 * the exception is recorded without the rest.
 */
export function failureOf(error: unknown, content: ContentPolicy): Failure {
  if (!(error instanceof Error)) {
    // Never serialised: a value that is not an Error may be anything, circular included.
    const message =
      typeof error === 'string' ? (content.on ? error : firstLine(error)) : `a non-Error ${typeof error} was thrown`;
    return { type: typeof error, message };
  }
  if (content.on) return { type: error.name, message: error.message, exception: error };
  const short = shortMessageOf(error);
  const exception: { name: string; message: string; stack?: string; code?: string | number } = {
    name: error.name,
    message: short,
  };
  const stack = stackOf(error, short);
  if (stack !== undefined) exception.stack = stack;
  // The SDK names the exception by its code when it has one: the same type as with content on.
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') exception.code = code;
  return { type: error.name, message: short, exception };
}

/** Error status, `error.type` and the status message, cut. */
export function markError(span: Span, type: string, message: string): void {
  span.setAttribute(AttributeName.errorType, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, MAX_STATUS_MESSAGE) });
}

/** What an error says in one line: a run's error without its stderr lines, any other its first line. */
function shortMessageOf(error: Error): string {
  // `is`, not `instanceof`: an error of another copy of the library (the other build) is recognised too.
  if (EvoSciError.is(error) && typeof error.shortMessage === 'string') return error.shortMessage;
  return firstLine(error.message);
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end === -1 ? text : text.slice(0, end);
}

/**
 * The stack without the lines of the message that `short` leaves out. V8
 * starts a stack with `name: message`; other engines give frames only.
 * A stack that holds the message some other way is left out whole.
 */
function stackOf(error: Error, short: string): string | undefined {
  const { stack, name, message } = error;
  if (typeof stack !== 'string' || message === short) return typeof stack === 'string' ? stack : undefined;
  const header = `${name}: ${message}`;
  if (stack.startsWith(header)) return `${name}: ${short}${stack.slice(header.length)}`;
  return stack.includes(message) ? undefined : stack;
}
