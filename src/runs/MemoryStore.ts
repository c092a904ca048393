import { EMPTY } from 'rxjs';
import type { EventSink, RunStore, StoredRun } from './RunStore.js';

const NO_SINK: EventSink = { append: () => undefined, close: () => Promise.resolve() };

/** No store: a hub without `dir` keeps its runs' events in their logs, and loses them with the process. */
export const memoryStore: RunStore = {
  durable: false,
  open: () => Promise.resolve({ runs: [], forgotten: [] }),
  save: (_run: StoredRun) => Promise.resolve(),
  events: () => NO_SINK,
  read: () => EMPTY,
  bytes: () => 0,
  forget: () => Promise.resolve(),
};
