// How the runs handler answers what went wrong: a refusal with its status,
// a request it could not read with 400, its own failure with 500 (saying
// nothing of the server's insides), and the app told of each failure through
// its hook. Nothing here throws: an answer that cannot be written is a
// connection closed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HubFullError, RunHubError } from '../errors.js';
import { sendJson } from './body.js';

/** Told of an error the handler could not answer with a status of its own: see `RunsHandlerOptions.onError`. */
export type RunsErrorHook = (error: unknown, req: IncomingMessage) => void;

/**
 * Seconds a client is told to wait (`Retry-After`) before it starts again
 * when the hub is full: a run takes minutes, so a client polling faster only
 * hears 429 more often.
 */
const HUB_FULL_RETRY_AFTER_SECONDS = 10;

/** A method the route does not answer: 405, with the methods it does for the `Allow` header. */
export class MethodNotAllowed extends RunHubError {
  static {
    this.prototype.name = 'MethodNotAllowed';
  }

  constructor(
    method: string,
    readonly allowed: readonly string[],
  ) {
    super(`${method.slice(0, 40)} is not allowed here: ${allowed.join(', ')}`, 405);
  }
}

/** Anything as one line of text, even a value whose `toString` throws. */
function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`;
    return typeof error === 'object' && error !== null ? JSON.stringify(error) : String(error);
  } catch {
    return 'a value that cannot be printed';
  }
}

/** The default hook: a process warning, as `runHub`'s `onStoreError` gives. */
function warn(error: unknown, req: IncomingMessage): void {
  const target = typeof req.url === 'string' ? req.url.slice(0, 200) : '';
  process.emitWarning(`runsHandler: ${req.method ?? ''} ${target}: ${describeError(error)}`, 'RunsHandlerWarning');
}

/** The app's hook, made safe to call: one that throws is reported as a warning, and the handler goes on. */
export function reporter(hook: RunsErrorHook | undefined): RunsErrorHook {
  const told = hook ?? warn;
  return (error, req) => {
    try {
      told(error, req);
    } catch (hookError) {
      try {
        warn(new Error(`onError threw ${describeError(hookError)} when told ${describeError(error)}`), req);
      } catch {
        // Nothing is left to tell: the request is answered all the same.
      }
    }
  };
}

/** Extra headers a refusal carries: `Allow` on a 405, `Retry-After` on a full hub's 429. */
function headersOf(err: RunHubError): Record<string, string> | undefined {
  if (err instanceof MethodNotAllowed) return { allow: err.allowed.join(', ') };
  if (err instanceof HubFullError) return { 'retry-after': String(HUB_FULL_RETRY_AFTER_SECONDS) };
  return undefined;
}

/**
 * Answers a request that failed: a `RunHubError` with its status and
 * message; anything else with 500, after telling `report`. Once the answer
 * has begun, or the client has gone, the connection is closed instead.
 */
export function answerFailure(req: IncomingMessage, res: ServerResponse, err: unknown, report: RunsErrorHook): void {
  const refusal = err instanceof RunHubError;
  if (!refusal) report(err, req);
  try {
    if (res.headersSent || res.destroyed) return void res.destroy();
    if (refusal) return sendJson(res, err.status, { error: err.message }, headersOf(err));
    sendJson(res, 500, { error: 'the server failed to answer' });
  } catch (writeError) {
    report(writeError, req);
    res.destroy();
  }
}
