// An event of a run's log with its serialised forms, made once for all the
// run's readers: a thousand readers of one run cost one `JSON.stringify`
// per event, not a thousand, and their queues hold the same strings.
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { toJsonl } from '../events/decode/jsonl.js';
import type { IndexedEvent } from './wire.js';

/**
 * One event of a log, its SSE frame and JSONL line made on first use and
 * kept: every reader of the run queues the same strings.
 */
export class LoggedEvent implements IndexedEvent {
  private sse: string | undefined;
  private jsonl: string | undefined;

  constructor(
    /** Its place in the run, from 0. */
    readonly index: number,
    /** The event. */
    readonly event: EvoEvent | UnknownEvent,
  ) {}

  /** The event's SSE frame: `id:` its index, `data:` its JSON. */
  get frame(): string {
    return (this.sse ??= sseFrame(this));
  }

  /** The event as a line of JSONL, as a store writes it. */
  get line(): string {
    return (this.jsonl ??= toJsonl(this.event));
  }
}

/** An event as one Server-Sent Event: `id:` its index, `data:` its JSON. */
const sseFrame = ({ index, event }: IndexedEvent): string => `id: ${index}\ndata: ${JSON.stringify(event)}\n\n`;

/** The SSE frame of an event: made once when it comes from a log, else made now. */
export const frameOf = (indexed: IndexedEvent): string =>
  indexed instanceof LoggedEvent ? indexed.frame : sseFrame(indexed);

/** The JSONL line of an event: made once when it comes from a log, else made now. */
export const lineOf = (indexed: IndexedEvent): string =>
  indexed instanceof LoggedEvent ? indexed.line : toJsonl(indexed.event);
