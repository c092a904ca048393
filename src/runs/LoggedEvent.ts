// An event of a run's log with its serialised forms, made once for all the
// run's readers: a thousand readers of one run cost one `JSON.stringify`
// per event, not a thousand.
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { toJsonl } from '../events/decode/jsonl.js';
import type { IndexedEvent } from './wire.js';

/** One event of a log, its SSE data and JSONL line made on first use and kept. */
export class LoggedEvent implements IndexedEvent {
  private json: string | undefined;
  private jsonl: string | undefined;

  constructor(
    /** Its place in the run, from 0. */
    readonly index: number,
    /** The event. */
    readonly event: EvoEvent | UnknownEvent,
  ) {}

  /** The event as JSON, as an SSE frame's `data:` carries it. */
  get data(): string {
    return (this.json ??= JSON.stringify(this.event));
  }

  /** The event as a line of JSONL, as a store writes it. */
  get line(): string {
    return (this.jsonl ??= toJsonl(this.event));
  }
}

/** The SSE data of an event: made once when it comes from a log, else made now. */
export const dataOf = (indexed: IndexedEvent): string =>
  indexed instanceof LoggedEvent ? indexed.data : JSON.stringify(indexed.event);

/** The JSONL line of an event: made once when it comes from a log, else made now. */
export const lineOf = (indexed: IndexedEvent): string =>
  indexed instanceof LoggedEvent ? indexed.line : toJsonl(indexed.event);
