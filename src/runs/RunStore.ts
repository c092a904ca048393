import * as t from 'io-ts';
import type { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import type { FlowControl } from '../common/FlowControl.js';
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
  /** The runs found when the hub opens, oldest first; a run that was live is reported interrupted. */
  open(): Promise<StoredRun[]>;
  /** Records a run's status: when it is created, started and ended. */
  save(run: StoredRun): Promise<void>;
  events(id: string): EventSink;
  /** A finished run's events after index `after` (durable stores only). */
  read(id: string, after: number, flow: FlowControl | undefined): Observable<IndexedEvent>;
  /** The size of a finished run's events, in bytes. */
  bytes(id: string): number;
  /** Forgets a run. */
  remove(id: string): Promise<void>;
}
