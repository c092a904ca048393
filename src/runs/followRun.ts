// A run hub's `GET /runs/:id/events` followed over `fetch`: the Observable of
// indexed events that `RunHub.follow` gives in the hub's own process, ending
// the same way, for browsers and for Node alike. No Node built-ins.
import {
  catchError,
  concatWith,
  defer,
  filter,
  finalize,
  from,
  map,
  of,
  retry,
  asyncScheduler,
  switchMap,
  takeWhile,
  throwError,
  timer,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
import { checkDecodeOptions, type DecodeOptions } from '../events/decode/JsonlDecoder.js';
import { decodeLine } from '../events/decode/decodeLine.js';
import { utf8Length } from '../events/decode/HeldLine.js';
import { DecodeError, DecodeIssue, EvoSciError } from '../events/errors.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { ForgottenRunError, RunHubError, UnknownRunError } from './errors.js';
import { errorOfEnd } from './runEnd.js';
import { RunEnd, RunErrorInfo, type IndexedEvent } from './wire.js';
import { LONGEST_TIMER_MS, sseMessages, SseIdleError, SseOverflowError, type EventSourceMessage } from './sseReader.js';
import { above, atLeast, wholeAtLeast } from '../common/checks.js';

/** Options of `followRun`; the decode options work as in `fromJsonl`, an issue's `line` being the event's index. */
export interface FollowRunOptions extends DecodeOptions {
  /** The `fetch` to send requests with. Default: the global one, looked up at each request. */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request, such as `Authorization`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The index of the last event already held: the follow starts after it. Default: from the first event. */
  readonly after?: number;
  /**
   * Milliseconds before reconnecting, until the server's `retry:` field sets
   * another delay (at most `MAX_SERVER_RETRY_MS`, a minute). Default 1000.
   */
  readonly retryDelayMs?: number;
  /**
   * Failed connections in a row (no new event in between) after which the
   * follow errors, whatever failed: a refused request, a 5xx, a body that
   * broke, went silent, ended without `end` or held a message too long. Default 5.
   */
  readonly maxRetries?: number;
  /**
   * Milliseconds without a byte from the hub (no event, no heartbeat) after
   * which the connection is taken for lost and a new one is made: one that
   * went half-open (a sleeping laptop, a NAT that forgot it) never ends on its
   * own. Default 45,000, three of the hub's heartbeats; `Infinity` waits for ever.
   */
  readonly idleTimeoutMs?: number;
}

/** The options with their defaults, checked once per `followRun` call. */
interface Settings extends Pick<FollowRunOptions, 'headers' | 'keepUnknown' | 'strict' | 'onDiagnostic'> {
  readonly fetch: typeof fetch;
  readonly scheduler: SchedulerLike;
  readonly maxLineBytes: number;
  readonly after: number;
  readonly retryDelayMs: number;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
}

const DEFAULT_RETRY_DELAY_MS = 1000;
const DEFAULT_MAX_RETRIES = 5;
/** Three of the heartbeats `runsHandler` sends every 15 s. */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
/** Room in the parser's buffer beyond an event's data: the `data: ` of its line and a line end. */
const FRAME_SLACK = 64;
/** How much of a refusal's body is read for its message. */
const ERROR_BODY_LIMIT = 4096;
/**
 * The longest a server's `retry:` field makes the follower wait: a server
 * that asks for more (`retry: 2000000000`, 23 days) gets this.
 */
export const MAX_SERVER_RETRY_MS = 60_000;
/** The step of a connection that ends the follow: the run completed. */
const END = Symbol('end');
/** What a `204 No Content` opens: no body, the run has nothing more to send. */
const NO_CONTENT = Symbol('no content');

/** A failure that a new connection may get past; `error` is what the follow errors with once retries run out. */
class Reconnect extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

/** Where a follow's timers come from: RxJS's async scheduler in use, a virtual one in tests. */
export interface FollowEnvironment {
  readonly scheduler: SchedulerLike;
}

const liveEnvironment: FollowEnvironment = { scheduler: asyncScheduler };

/**
 * Follows a run served by a run hub (`GET /runs/:id/events`, Server-Sent
 * Events) over `fetch`, in a browser or in Node: each event once, in order,
 * as `{ index, event }`. Cold: each subscription is one reader, from the
 * first event or from `after`.
 *
 * When the connection drops (the request fails, the body ends or breaks
 * before the run's `end`), it reconnects after `retryDelayMs` (or the
 * server's `retry:`) with `Last-Event-ID`, and drops any event sent again;
 * after `maxRetries` failures in a row it errors. A missing index is an
 * error, never skipped over. Completes when the run completed; errors as
 * `RunHub.follow` does otherwise (`ExitError`, `CancelledError`, …, by
 * `errorOfEnd`); completes too on a `204 No Content`, the SSE answer that
 * says there is nothing more to read. Errors with the hub's `error` event (an `Error` of its name and
 * message), with `UnknownRunError` (404), `ForgottenRunError` (410) or a
 * `RunHubError` of the status for any other refusal; 5xx and 429 are retried.
 * Unsubscribing aborts the request.
 *
 * ```ts
 * followRun(`/runs/${id}/events`, { headers: { authorization: `Bearer ${token}` } })
 *   .pipe(map(({ event }) => event), ofType('text'))
 *   .subscribe((e) => output.append(e.content));
 * ```
 *
 * ```
 * connection 1  ─0─1─2─╳              the body breaks after event 2
 * connection 2           ─3─4─end|    Last-Event-ID: 2, after retryDelayMs
 * followRun$    ─0─1─2────3─4────|    completes: the run completed
 * ```
 */
export function followRun(url: string | URL, options: FollowRunOptions = {}): Observable<IndexedEvent> {
  return followRunIn(liveEnvironment, url, options);
}

/** `followRun` on the scheduler given: a virtual one tests its delays in virtual time. */
export function followRunIn(
  environment: FollowEnvironment,
  url: string | URL,
  options: FollowRunOptions = {},
): Observable<IndexedEvent> {
  const settings = settingsOf(options, environment);
  const target = String(url);
  return defer(() => {
    const follower = new RunFollower(target, settings);
    return defer(() => follower.connect()).pipe(retry({ delay: (error: unknown) => follower.retryAfter(error) }));
  });
}

/** One subscription's reading of a run, across its connections. */
class RunFollower {
  /** The index of the last event received (emitted, skipped or reported as bad): what `Last-Event-ID` names. */
  private last: number;
  /** Connections in a row that failed before a new event came. */
  private failures = 0;
  /** The wait before a reconnection: the option's, until the server sends `retry:`. */
  private delayMs: number;

  constructor(
    private readonly url: string,
    private readonly settings: Settings,
  ) {
    this.last = settings.after;
    this.delayMs = settings.retryDelayMs;
  }

  /** One connection: the events after `last`; completes when the run completed, errors with `Reconnect` on a drop. */
  connect(): Observable<IndexedEvent> {
    const abort = new AbortController();
    return from(this.open(abort)).pipe(
      switchMap((body) =>
        body === NO_CONTENT
          ? of(END)
          : this.messagesOf(body).pipe(
              concatWith(defer(() => throwError(() => this.dropped(new Error('the stream ended before the run did'))))),
              map((message) => this.step(message)),
            ),
      ),
      takeWhile((step): step is IndexedEvent | undefined => step !== END),
      filter((step): step is IndexedEvent => step !== undefined),
      finalize(() => abort.abort()),
    );
  }

  /**
   * When to reconnect after `error`: after the delay while retries remain,
   * whatever failed, so that no server can make the follower spin; never
   * after the run's own answer.
   */
  retryAfter(error: unknown): Observable<unknown> {
    if (!(error instanceof Reconnect)) return throwError(() => error);
    this.failures++;
    if (this.failures > this.settings.maxRetries) return throwError(() => error.error);
    return timer(this.delayMs, this.settings.scheduler);
  }

  /** Sends the request; resolves with the body of an event stream, or `NO_CONTENT`; rejects with why there is none. */
  private async open(abort: AbortController): Promise<ReadableStream<Uint8Array> | typeof NO_CONTENT> {
    const headers = new Headers(this.settings.headers);
    headers.set('accept', 'text/event-stream');
    if (this.last >= 0) headers.set('last-event-id', String(this.last));
    // An answer that does not come (the reconnection went out on the dead link) is given up as a silent body is.
    const { idleTimeoutMs, scheduler } = this.settings;
    const unanswered =
      idleTimeoutMs > LONGEST_TIMER_MS
        ? undefined
        : scheduler.schedule(() => abort.abort(new SseIdleError(idleTimeoutMs)), idleTimeoutMs);
    const response = await this.settings
      .fetch(this.url, { headers, signal: abort.signal })
      .catch((err: unknown) => {
        throw this.dropped(err);
      })
      .finally(() => unanswered?.unsubscribe());
    if (!response.ok) throw await this.refusal(response);
    // The SSE answer for "do not reconnect": a hub sends it to a reconnection made after the run's end.
    if (response.status === 204) {
      response.body?.cancel().catch(() => undefined);
      return NO_CONTENT;
    }
    const type = response.headers.get('content-type') ?? '';
    if (response.body === null || !/^text\/event-stream\b/i.test(type)) {
      response.body?.cancel().catch(() => undefined);
      throw new EvoSciError(
        `followRun: ${this.url} answered ${response.status} with ${type || 'no content type'}, not text/event-stream`,
      );
    }
    return response.body;
  }

  /** The error of a non-2xx answer: the hub's own class where one fits; 5xx and 429 to be retried. */
  private async refusal(response: Response): Promise<Error> {
    const message = await errorMessageOf(response);
    const { status } = response;
    if (status === 404) return new UnknownRunError(runIdOf(this.url));
    if (status === 410) return new ForgottenRunError(runIdOf(this.url));
    const error = new RunHubError(message, status);
    return status >= 500 || status === 429 ? new Reconnect(error) : error;
  }

  private messagesOf(body: ReadableStream<Uint8Array>): Observable<EventSourceMessage> {
    return sseMessages(body, {
      maxChars: this.settings.maxLineBytes + FRAME_SLACK,
      onRetry: (ms) => (this.delayMs = Math.min(ms, MAX_SERVER_RETRY_MS)),
      idleMs: this.settings.idleTimeoutMs,
      scheduler: this.settings.scheduler,
    }).pipe(catchError((err: unknown) => throwError(() => this.failureOf(err))));
  }

  /**
   * Why reading a body failed. An event too long to hold is reported as a bad
   * line would be, then skipped: the next connection resumes after it (events
   * are the only messages a hub sends long). That connection failed all the
   * same, and is retried as any other.
   */
  private failureOf(err: unknown): Error {
    if (!(err instanceof SseOverflowError)) return this.dropped(err);
    const { maxLineBytes } = this.settings;
    this.report(new DecodeIssue(this.last + 1, '', `event longer than maxLineBytes (${maxLineBytes}); dropped`));
    this.last++;
    return this.dropped(err);
  }

  private dropped(cause: unknown): Reconnect {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new Reconnect(new EvoSciError(`followRun: lost the connection to ${this.url}: ${reason}`, { cause }));
  }

  /** What one message means: an event, `undefined` for none, `END` when the run completed; throws how else it ended. */
  private step(message: EventSourceMessage): IndexedEvent | undefined | typeof END {
    switch (message.event ?? 'message') {
      case 'message':
        return this.event(message);
      case 'end':
        return endOf(message.data);
      case 'error':
        throw errorOf(message.data);
      default:
        // A kind of message a later hub may send: not for this client.
        return undefined;
    }
  }

  private event({ id, data }: EventSourceMessage): IndexedEvent | undefined {
    if (id === undefined || !/^\d{1,15}$/.test(id)) {
      throw new EvoSciError(`followRun: an event came with ${id === undefined ? 'no id' : `id ${id}`}, not an index`);
    }
    const index = Number(id);
    // Sent again after a resume (a hub may replay from earlier than asked): already had.
    if (index <= this.last) return undefined;
    if (index !== this.last + 1) {
      throw new EvoSciError(`followRun: event ${index} came after event ${this.last}: the events between are missing`);
    }
    this.last = index;
    this.failures = 0;
    const event = this.decode(data, index);
    return event === undefined ? undefined : { index, event };
  }

  /** The event in `data`, or `undefined` for one skipped (unknown type) or reported. */
  private decode(data: string, index: number): EvoEvent | UnknownEvent | undefined {
    const { maxLineBytes, keepUnknown, onDiagnostic } = this.settings;
    // UTF-8 is 1 to 3 bytes per UTF-16 unit: only data past a third of the limit needs counting.
    if (data.length * 3 > maxLineBytes && utf8Length(data) > maxLineBytes) {
      this.report(new DecodeIssue(index, data, `event longer than maxLineBytes (${maxLineBytes}); dropped`));
      return undefined;
    }
    const result = decodeLine(data, index, keepUnknown, onDiagnostic);
    if (!(result instanceof DecodeIssue)) return result;
    this.report(result);
    return undefined;
  }

  private report(issue: DecodeIssue): void {
    if (this.settings.strict) throw new DecodeError(issue);
    this.settings.onDiagnostic?.(issue);
  }
}

/** `END` for a run that completed; throws the error of a run that ended otherwise, as `RunHub.follow` does. */
function endOf(data: string): typeof END {
  const end = parseJson(data);
  if (!RunEnd.is(end)) throw new EvoSciError(`followRun: the end event is not a RunEnd: ${data.slice(0, 200)}`);
  const error = errorOfEnd(end);
  if (error) throw error;
  return END;
}

/** The error of the hub's `error` event: its name and message, as the hub sent them. */
function errorOf(data: string): Error {
  const info = parseJson(data);
  const { name, message } = RunErrorInfo.is(info)
    ? info
    : { name: 'Error', message: `the run hub ended the stream: ${data.slice(0, 200)}` };
  const error = new Error(message);
  error.name = name;
  return error;
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

/** The run's id in a `…/runs/:id/events` URL, for the errors that name it. */
function runIdOf(url: string): string {
  const parts = url.split(/[?#]/, 1)[0]!.split('/');
  const id = (parts.at(-1) === 'events' ? parts.at(-2) : parts.at(-1)) ?? '';
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

/** The options with their defaults; a wrong value is a `TypeError` naming it, thrown where the call is. */
function settingsOf(options: FollowRunOptions, { scheduler }: FollowEnvironment): Settings {
  const { maxLineBytes } = checkDecodeOptions(options, 'followRun');
  const { after = -1, retryDelayMs = DEFAULT_RETRY_DELAY_MS, maxRetries = DEFAULT_MAX_RETRIES } = options;
  wholeAtLeast('followRun', 'after', after, -1);
  atLeast('followRun', 'retryDelayMs', retryDelayMs, 0);
  atLeast('followRun', 'maxRetries', maxRetries, 0);
  const idleTimeoutMs = above('followRun', 'idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, 0);
  return {
    ...options,
    // Called unbound: a browser's fetch refuses another `this`; the global is looked up at each request.
    fetch: (input, init) => (options.fetch ?? globalThis.fetch)(input, init),
    scheduler,
    maxLineBytes,
    after,
    retryDelayMs,
    maxRetries,
    idleTimeoutMs,
  };
}
