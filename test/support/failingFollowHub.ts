// A RunHub as a user may write one (the interface is public): a real hub
// whose `follow` of some runs fails after a few events, with one of every
// kind of error a `follow` can raise.
import { readFile } from 'node:fs/promises';
import { concatWith, take, throwError, type Observable } from 'rxjs';
import {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  IdempotencyKeyReusedError,
  RunHubError,
  RunRequestError,
  UnknownRunError,
  type FollowOptions,
  type IndexedEvent,
  type RunHub,
  type RunStatus,
  type StartedRun,
  type StartOptions,
  type StartRequest,
} from '../../src/runs/index.js';
import { RunRestartedError } from '../../src/runs/errors.js';

/** Each kind of failure, by name: every `RunHubError` class, a store's I/O error, an unknown error, thrown values that are not errors. */
export const FAILURES = {
  RunHubError: () => new RunHubError('the hub refused', 503),
  UnknownRunError: () => new UnknownRunError('gone-run'),
  ForgottenRunError: () => new ForgottenRunError('old-run'),
  HubFullError: () => new HubFullError(2),
  RunRestartedError: () => new RunRestartedError('moved-run', 2),
  RunRequestError: () => new RunRequestError('a bad request'),
  IdempotencyKeyReusedError: () => new IdempotencyKeyReusedError('other-run'),
  HubClosedError: () => new HubClosedError(),
  // A real one: reading a directory as a file, as a store's read of a damaged directory fails.
  'I/O error': () => readFile('/').catch((err: unknown) => err),
  Error: () => new Error('something odd in /srv/secret/runs'),
  string: () => 'a string thrown',
  number: () => 42,
  undefined: () => undefined,
  null: () => null,
  object: () => ({ reason: 'a plain object' }),
  'null-prototype object': () => Object.create(null) as unknown,
} satisfies Record<string, () => unknown>;

export type FailureKind = keyof typeof FAILURES;

/** How a follow fails: after 3 events with one of `FAILURES`, or by throwing as it is called (a hub's bug). */
export type FollowFailure = FailureKind | 'throws when called';

/** The events a failing follow hands on before it fails. */
export const EVENTS_BEFORE_FAILURE = 3;

/** The id under which a failing hub serves its run that fails as `kind` says. */
export const failingId = (kind: FollowFailure) => `fail-${kind.replace(/[^A-Za-z0-9]+/g, '-')}`;

const KINDS: readonly FollowFailure[] = [...(Object.keys(FAILURES) as FailureKind[]), 'throws when called'];

/**
 * A hub that serves, besides the runs of `inner`, one run per kind of
 * failure (`failingId(kind)`): the run `base` of `inner` (a finished one) under
 * another id, whose follow fails as its kind says.
 */
export class FailingFollowHub implements RunHub {
  private readonly failing = new Map(KINDS.map((kind) => [failingId(kind), kind]));

  constructor(
    private readonly inner: RunHub,
    private readonly base: string,
  ) {}

  follow(id: string, options?: FollowOptions): Observable<IndexedEvent> {
    const kind = this.failing.get(id);
    if (kind === undefined) return this.inner.follow(id, options);
    if (kind === 'throws when called') throw new TypeError('a bug of the hub');
    return this.inner
      .follow(this.base, options)
      .pipe(take(EVENTS_BEFORE_FAILURE), concatWith(throwError(() => failureOf(kind))));
  }

  async status(id: string): Promise<RunStatus> {
    if (!this.failing.has(id)) return this.inner.status(id);
    return { ...(await this.inner.status(this.base)), id };
  }

  start(request: StartRequest, options?: StartOptions): Promise<StartedRun> {
    return this.inner.start(request, options);
  }

  list(): Promise<readonly RunStatus[]> {
    return this.inner.list();
  }

  cancel(id: string): Promise<RunStatus> {
    return this.inner.cancel(id);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The I/O error is read once, as the hub starts: `throwError` takes a value, not a promise. */
const made = new Map<FailureKind, unknown>();

export async function prepareFailures(): Promise<void> {
  for (const [kind, make] of Object.entries(FAILURES)) made.set(kind as FailureKind, await make());
}

function failureOf(kind: FailureKind): unknown {
  if (!made.has(kind)) throw new Error('prepareFailures() first');
  return made.get(kind);
}
