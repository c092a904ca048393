// How a run's ending travels: an error becomes a `RunEnd` (what the status
// and the `end` event say), and a `RunEnd` becomes the same error class on
// the other side, so that `follow()` ends alike in the hub's process, over
// SSE in a browser, and after a restart. No Node built-ins.
import { CancelledError, DecodeError, EvoSciError, runErrorOf, type EvoSciErrorDetails } from '../events/errors.js';
import { RunHubError, RunInterruptedError } from './errors.js';
import type { RunEnd, RunErrorInfo, RunStatus } from './wire.js';

/** An error as a status carries it: class name, one-line message, details; never stderr. */
export function errorInfoOf(error: unknown): RunErrorInfo {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error).split('\n')[0]! };
  const message = EvoSciError.is(error) ? error.shortMessage : error.message.split('\n')[0]!;
  const info: { -readonly [K in keyof RunErrorInfo]: RunErrorInfo[K] } = { name: error.name, message };
  if (EvoSciError.is(error)) {
    if (error.exitCode !== undefined) info.exitCode = error.exitCode;
    if (error.signal !== undefined) info.signal = error.signal;
    if (error.threadId !== undefined) info.threadId = error.threadId;
  }
  return info;
}

/**
 * What a cancel stopped: a run before it started, one waiting to run again
 * (its worker was lost), or one while it ran.
 */
export type CancelledWhile = 'queued' | 'requeued' | 'running';

const CANCELLED_WHILE: Readonly<Record<CancelledWhile, string>> = {
  queued: 'before it started',
  requeued: 'before it ran again',
  running: 'while it ran',
};

/**
 * The error of a run cancelled on purpose, the same from every hub and to
 * every reader: its message says what the cancel stopped, and it carries
 * nothing more. The signals that stopped the process are the cancel's
 * doing, and the thread the run reported is its status's `threadId`.
 */
export function cancelledError(id: string, stopped: CancelledWhile, cause?: unknown): CancelledError {
  return new CancelledError(`run ${id} was cancelled ${CANCELLED_WHILE[stopped]}`, { cause });
}

/** How a run ended, from the error it ended with (`undefined`: it completed). */
export function runEndOf(error: unknown): RunEnd {
  if (error === undefined) return { state: 'completed' };
  const info = errorInfoOf(error);
  const state =
    info.name === 'CancelledError' ? 'cancelled' : info.name === 'RunInterruptedError' ? 'interrupted' : 'failed';
  return { state, error: info };
}

/**
 * The error a follower of an ended run errors with, `undefined` when it
 * completed: the same class as the run's own where this library has it
 * (a `DecodeError` comes back as its base class, without its issue), else
 * an `EvoSciError` whose message starts with the class name.
 */
export function errorOfEnd(end: RunEnd): EvoSciError | undefined {
  if (end.state === 'completed') return undefined;
  const info = end.error ?? { name: 'EvoSciError', message: `the run ended ${end.state}` };
  const details: EvoSciErrorDetails = { exitCode: info.exitCode, signal: info.signal, threadId: info.threadId };
  // A DecodeError's issue stays with the hub: it comes back as its base class.
  if (info.name === DecodeError.prototype.name) return new EvoSciError(info.message, details);
  return runErrorOf(info.name, info.message, details, { RunInterruptedError });
}

/** Whether the run has ended: its event count is final. */
export const hasEnded = (status: RunStatus) => status.state !== 'running' && status.state !== 'queued';

/** The error a follower of a run that ended errors with, `undefined` while it runs or once it completed. */
export function errorOfStatus(status: RunStatus): EvoSciError | undefined {
  const { state, error } = status;
  if (state === 'running' || state === 'queued') return undefined;
  return errorOfEnd(error === undefined ? { state } : { state, error });
}

/**
 * What a client is told of an error that is not how the run ended: a hub's
 * refusal by its class and first line (`ForgottenRunError`,
 * `RunRestartedError`…); anything else by its class only, since its message
 * may carry the server's paths or addresses (the app's `onError` has it). Shared by `runsHandler`'s
 * `error` event and `toMessageEvents`'.
 */
export function failureInfo(error: unknown): { name: string; message: string } {
  if (error instanceof RunHubError) return { name: error.name, message: error.message.split('\n')[0]!.slice(0, 500) };
  const name = error instanceof Error && /^\w{1,80}$/.test(error.name) ? error.name : 'Error';
  return { name, message: 'the server failed to send the rest of this run' };
}
