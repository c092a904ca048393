import type { EvoSciErrorDetails } from './EvoSciErrorDetails.js';

const TAIL_LINES_IN_MESSAGE = 8;

/**
 * The base of every error this library raises. Catch it to handle any failed
 * run; test `instanceof` a subclass for the cause.
 */
export class EvoSciError extends Error {
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly stderrTail: string;
  readonly threadId: string | undefined;

  constructor(message: string, details: EvoSciErrorDetails = {}) {
    const tail = details.stderrTail ?? '';
    const lastLines = tail.trimEnd().split('\n').slice(-TAIL_LINES_IN_MESSAGE).join('\n');
    super(lastLines ? `${message}\n--- last stderr lines ---\n${lastLines}` : message, {
      cause: details.cause,
    });
    this.name = new.target.name;
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderrTail = tail;
    this.threadId = details.threadId;
  }
}
