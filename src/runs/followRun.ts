// A run hub's `GET /runs/:id/events` followed over `fetch`: the Observable of
// indexed events that `RunHub.follow` gives in the hub's own process, ending
// the same way, for browsers and for Node alike. No Node built-ins.
import {
  catchError,
  concat,
  concatWith,
  defer,
  filter,
  finalize,
  from,
  map,
  of,
  retry,
  switchMap,
  takeWhile,
  throwError,
  timer,
  type Observable,
} from 'rxjs';
import { decodeLine } from '../events/decode/decodeLine.js';
import { utf8Length } from '../events/decode/HeldLine.js';
import { DecodeError, DecodeIssue, EvoSciError } from '../events/errors.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { RunRestartedError } from './errors.js';
import {
  liveEnvironment,
  settingsOf,
  type FollowEnvironment,
  type FollowRunOptions,
  type FollowSettings,
  type RefollowRunOptions,
} from './followOptions.js';
import { checkEnd, errorOfEvent, refusalOf, runIdOf } from './hubAnswers.js';
import { Outage } from './Outage.js';
import type { IndexedEvent } from './wire.js';
import { LONGEST_TIMER_MS, sseMessages, SseIdleError, SseOverflowError, type EventSourceMessage } from './sseReader.js';

export type { FollowEnvironment, FollowRunOptions, RefollowRunOptions } from './followOptions.js';

/**
 * What `followRun` with `onRestart: 'refollow'` emits when the hub says the
 * run started again on another worker, before it reads the run again from
 * its first event: whatever was built from the events before it is to be
 * dropped. Tell it from an event by its key: `'restarted' in item`.
 */
export interface RunRestart {
  /** The hub's word: `attempt` is the attempt now running. */
  readonly restarted: RunRestartedError;
}

/** Room in the parser's buffer beyond an event's data: the `data: ` of its line and a line end. */
const FRAME_SLACK = 64;
/** The step of a connection that ends the follow: the run completed. */
const END = Symbol('end');
/** What a `204 No Content` opens: no body, the run has nothing more to send. */
const NO_CONTENT = Symbol('no content');

/** What one message of a connection comes to: an event, a restart, nothing, or the run's completion. */
type Step = IndexedEvent | RunRestart | undefined | typeof END;

/** A failure that a new connection may get past; `error` is what the give-up names as its cause. */
class Reconnect extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

/**
 * Follows a run served by a run hub (`GET /runs/:id/events`, Server-Sent
 * Events) over `fetch`, in a browser or in Node: each event once, in order,
 * as `{ index, event }`. Cold: each subscription is one reader, from the
 * first event or from `after`.
 *
 * When a connection fails (the request fails or is refused with a 5xx or
 * 429, the body breaks, goes silent, ends before the run's `end` or holds a
 * message too long), it reconnects with `Last-Event-ID` and drops any event
 * sent again. Each wait is a random share of a ceiling that starts at
 * `retryDelayMs` (or the server's `retry:`) and doubles up to
 * `maxRetryDelayMs`; after `giveUpAfterMs` without a connection (or
 * `maxRetries` tries) since its last new event, it errors with
 * `FollowGaveUpError`. A missing index is an error, never skipped over.
 *
 * Completes when the run completed, or on a `204 No Content` (the SSE
 * answer that there is nothing more to read); errors as `RunHub.follow` does
 * otherwise (`ExitError`, `CancelledError`, …, by `errorOfEnd`), with the
 * hub's `error` event (the hub's class where this library has it, such as
 * `RunRestartedError`, else an `Error` of its name), with `UnknownRunError`
 * (404), `ForgottenRunError` (410) or a `RunHubError` of the status for any
 * other refusal. With `onRestart: 'refollow'`, a run restarted on another
 * worker emits a `RunRestart`, then is read again from its start.
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
 * connection 2           ─3─4─end|    Last-Event-ID: 2, after a wait in [0, retryDelayMs)
 * followRun$    ─0─1─2────3─4────|    completes: the run completed
 * ```
 */
export function followRun(url: string | URL, options?: FollowRunOptions): Observable<IndexedEvent>;
export function followRun(url: string | URL, options: RefollowRunOptions): Observable<IndexedEvent | RunRestart>;
export function followRun(
  url: string | URL,
  options?: FollowRunOptions | RefollowRunOptions,
): Observable<IndexedEvent | RunRestart>;
export function followRun(
  url: string | URL,
  options: FollowRunOptions | RefollowRunOptions = {},
): Observable<IndexedEvent | RunRestart> {
  return followRunIn(liveEnvironment, url, options);
}

/** `followRun` on the scheduler and jitter given: virtual ones test its waits in virtual time. */
export function followRunIn(
  environment: FollowEnvironment,
  url: string | URL,
  options: FollowRunOptions | RefollowRunOptions = {},
): Observable<IndexedEvent | RunRestart> {
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
  /** The attempt of the run the follow reads: the latest a `RunRestartedError` named. */
  private attempt = 0;
  private readonly outage: Outage;
  private readonly runId: string;

  constructor(
    private readonly url: string,
    private readonly settings: FollowSettings,
  ) {
    this.last = settings.after;
    this.outage = new Outage(settings, url, settings.scheduler.now(), settings.random);
    this.runId = runIdOf(url);
  }

  /** One connection: the events after `last`; completes when the run completed, errors with `Reconnect` on a drop. */
  connect(): Observable<IndexedEvent | RunRestart> {
    const abort = new AbortController();
    return from(this.open(abort)).pipe(
      switchMap((body) => (body === NO_CONTENT ? of(END) : this.stepsOf(body))),
      takeWhile((step): step is Exclude<Step, typeof END> => step !== END),
      filter((step) => step !== undefined),
      catchError((err: unknown) => this.restartOr(err)),
      finalize(() => abort.abort()),
    );
  }

  /**
   * When to reconnect after `error`: after the outage's wait, whatever
   * failed, so that no server can make the follower spin; never after the
   * run's own answer, nor once the outage has run out.
   */
  retryAfter(error: unknown): Observable<unknown> {
    if (!(error instanceof Reconnect)) return throwError(() => error);
    const { scheduler } = this.settings;
    const wait = this.outage.failed(error.error, scheduler.now());
    return typeof wait === 'number' ? timer(wait, scheduler) : throwError(() => wait);
  }

  /**
   * A run restarted on another worker, when the follow reads it again: told
   * first, then read from its start by the next connection, which waits as
   * after any failure. Only a later attempt than any before is read again: a
   * hub that says the same at every connection ends the follow.
   */
  private restartOr(err: unknown): Observable<RunRestart> {
    const again = this.settings.refollow && err instanceof RunRestartedError && err.attempt > this.attempt;
    if (!again) return throwError(() => err);
    this.attempt = err.attempt;
    this.last = -1;
    return concat(
      of({ restarted: err }),
      throwError(() => new Reconnect(err)),
    );
  }

  /** Sends the request; resolves with the body of an event stream, or `NO_CONTENT`; rejects with why there is none. */
  private async open(abort: AbortController): Promise<ReadableStream<Uint8Array> | typeof NO_CONTENT> {
    const response = await this.request(abort);
    if (!response.ok) {
      const refusal = await refusalOf(response, this.runId);
      throw refusal.status >= 500 || refusal.status === 429 ? new Reconnect(refusal) : refusal;
    }
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
    this.outage.connected(this.settings.scheduler.now());
    return response.body;
  }

  /** The answer to one request for the events after `last`; rejects with `Reconnect` when none comes. */
  private async request(abort: AbortController): Promise<Response> {
    const headers = new Headers(this.settings.headers);
    headers.set('accept', 'text/event-stream');
    if (this.last >= 0) headers.set('last-event-id', String(this.last));
    // An answer that does not come (the reconnection went out on the dead link) is given up as a silent body is.
    const { idleTimeoutMs, scheduler } = this.settings;
    const unanswered =
      idleTimeoutMs > LONGEST_TIMER_MS
        ? undefined
        : scheduler.schedule(() => abort.abort(new SseIdleError(idleTimeoutMs)), idleTimeoutMs);
    return this.settings
      .fetch(this.url, { headers, signal: abort.signal })
      .catch((err: unknown) => {
        throw this.dropped(err);
      })
      .finally(() => unanswered?.unsubscribe());
  }

  /** What a body's messages come to, ending with a drop if the body ends before the run did. */
  private stepsOf(body: ReadableStream<Uint8Array>): Observable<Step> {
    return sseMessages(body, {
      maxChars: this.settings.maxLineBytes + FRAME_SLACK,
      onRetry: (ms) => this.outage.serverRetry(ms),
      idleMs: this.settings.idleTimeoutMs,
      scheduler: this.settings.scheduler,
    }).pipe(
      catchError((err: unknown) => throwError(() => this.failureOf(err))),
      concatWith(defer(() => throwError(() => this.dropped(new Error('the stream ended before the run did'))))),
      map((message) => this.step(message)),
    );
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

  /** What one message means; throws how the run ended, if not completed. */
  private step(message: EventSourceMessage): Step {
    switch (message.event ?? 'message') {
      case 'message':
        return this.event(message);
      case 'end':
        checkEnd(message.data);
        return END;
      case 'error':
        throw errorOfEvent(message.data, this.runId);
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
    this.outage.progressed();
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
