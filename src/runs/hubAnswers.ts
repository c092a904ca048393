// What a run hub tells a follower besides events: how the run ended, the
// `error` event that ends a stream, and a refusal of the request, each as the
// hub's own error class where this library has one, so that a follower over
// SSE catches what a follower in the hub's process catches. No Node built-ins.
import { EvoSciError } from '../events/errors.js';
import { ForgottenRunError, HubClosedError, RunHubError, RunRestartedError, UnknownRunError } from './errors.js';
import { errorOfEnd } from './runEnd.js';
import { RunEnd, RunErrorInfo } from './wire.js';

/** How much of a refusal's body is read for its message. */
const ERROR_BODY_LIMIT = 4096;

/** The hub's classes an `error` event names, made again from the run's id and the event's message. */
const HUB_ERRORS: Readonly<Record<string, (id: string, message: string) => RunHubError | undefined>> = {
  UnknownRunError: (id) => new UnknownRunError(id),
  ForgottenRunError: (id) => new ForgottenRunError(id),
  HubClosedError: () => new HubClosedError(),
  RunRestartedError: (id, message) => {
    // The attempt travels only in the message the class wrote.
    const attempt = /\bas attempt (\d{1,9})\b/.exec(message)?.[1];
    return attempt === undefined ? undefined : new RunRestartedError(id, Number(attempt));
  },
};

/** Returns when an `end` event says the run completed; throws the error of a run that ended otherwise. */
export function checkEnd(data: string): void {
  const end = parseJson(data);
  if (!RunEnd.is(end)) throw new EvoSciError(`followRun: the end event is not a RunEnd: ${data.slice(0, 200)}`);
  const error = errorOfEnd(end);
  if (error) throw error;
}

/**
 * The error of the hub's `error` event, with the hub's message: the hub's
 * own class (`RunRestartedError`, `ForgottenRunError`, …, `status` and all)
 * where this library has it, else an `Error` of the name the hub sent.
 */
export function errorOfEvent(data: string, runId: string): Error {
  const info = parseJson(data);
  if (!RunErrorInfo.is(info)) return new Error(`the run hub ended the stream: ${data.slice(0, 200)}`);
  // The name comes from the wire: only the table's own entries count, never `constructor` or `__proto__`.
  const known = Object.hasOwn(HUB_ERRORS, info.name) ? HUB_ERRORS[info.name]!(runId, info.message) : undefined;
  const error = known ?? new Error(info.message);
  error.message = info.message;
  if (!known) error.name = info.name;
  return error;
}

/** The error of a non-2xx answer: the hub's own class where one fits, else a `RunHubError` of the status. */
export async function refusalOf(response: Response, runId: string): Promise<RunHubError> {
  const message = await errorMessageOf(response);
  const { status } = response;
  if (status === 404) return new UnknownRunError(runId);
  if (status === 410) return new ForgottenRunError(runId);
  return new RunHubError(message, status);
}

/** The run's id in a `…/runs/:id/events` URL, for the errors that name it. */
export function runIdOf(url: string): string {
  const parts = url.split(/[?#]/, 1)[0]!.split('/');
  const id = (parts.at(-1) === 'events' ? parts.at(-2) : parts.at(-1)) ?? '';
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The hub's `{ "error": "…" }` message of a refusal, from the start of its body; else its status line. */
async function errorMessageOf(response: Response): Promise<string> {
  const text = response.body ? await headOf(response.body, ERROR_BODY_LIMIT) : '';
  const error = (parseJson(text) as { error?: unknown } | null | undefined)?.error;
  return typeof error === 'string' ? error : `HTTP ${response.status} ${response.statusText}`.trim();
}

/** About the first `limit` characters of a body: a refusal's body is not trusted to be small. */
async function headOf(body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = body.getReader();
  const utf8 = new TextDecoder();
  let text = '';
  try {
    while (text.length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      text += utf8.decode(value, { stream: true });
    }
  } catch {
    // A body cut short says what it said so far.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return text;
}
