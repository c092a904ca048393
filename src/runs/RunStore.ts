import * as t from 'io-ts';
import type { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import type { FlowControl } from '../common/FlowControl.js';
import { FINGERPRINT, IDEMPOTENCY_KEY } from './policy.js';
import { RUN_ID } from './runId.js';
import { RunStatus, type IndexedEvent } from './wire.js';

/** A run as a store keeps it: its status, and the key that started it. */
export const StoredRun = t.intersection([
  t.type({ status: RunStatus }),
  t.partial({
    idempotencyKey: t.string,
    /** What the request that started it was: a repeated key with another request is refused. */
    fingerprint: t.string,
  }),
]);
export type StoredRun = t.TypeOf<typeof StoredRun>;

/** A run its hub forgot: its id, and the key and request that started it, so that the key still names it. */
export const ForgottenRun = t.intersection([
  t.type({ id: t.string }),
  t.partial({ idempotencyKey: t.string, fingerprint: t.string }),
]);
export type ForgottenRun = t.TypeOf<typeof ForgottenRun>;

/**
 * Whether a run's id, key and fingerprint are ones a hub makes (at most 128,
 * 255 and 43 ASCII bytes): what a store reads, and its hub keeps, stays bounded.
 */
export function isHubMade({ id, idempotencyKey, fingerprint }: ForgottenRun): boolean {
  return (
    RUN_ID.test(id) &&
    (idempotencyKey === undefined || IDEMPOTENCY_KEY.test(idempotencyKey)) &&
    (fingerprint === undefined || FINGERPRINT.test(fingerprint))
  );
}

/** What a store holds when its hub opens: its runs, oldest first, and the runs it forgot, the latest last. */
export interface OpenedStore {
  readonly runs: readonly StoredRun[];
  readonly forgotten: readonly ForgottenRun[];
}

/** Where one run's events go as they come. */
export interface EventSink {
  append(event: EvoEvent | UnknownEvent): void;
  /** Resolves once every event appended is stored. */
  close(): Promise<void>;
}

/** Where a hub keeps its runs: in memory, or in a directory that outlives the process. */
export interface RunStore {
  /** Whether a finished run's events are read from the store (so the hub need not hold them). */
  readonly durable: boolean;
  /** What the store holds when the hub opens; a run that was live is reported interrupted. */
  open(): Promise<OpenedStore>;
  /** Records a run's status: when it is created, started and ended. */
  save(run: StoredRun): Promise<void>;
  /** Opens where a run that begins stores its events. */
  events(id: string): EventSink;
  /**
   * A finished run's events after index `after` (durable stores only). Errors
   * with a `RunHubError` that says they are lost when the store no longer
   * has the events its status counts.
   */
  read(run: Pick<RunStatus, 'id' | 'events'>, after: number, flow: FlowControl | undefined): Observable<IndexedEvent>;
  /** The size of a finished run's events, in bytes. */
  bytes(id: string): number;
  /** Forgets a run: a durable store records it as forgotten, then removes its events and status. */
  forget(run: ForgottenRun): Promise<void>;
}
