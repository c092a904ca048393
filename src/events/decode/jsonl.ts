import { Observable, type Subscriber } from 'rxjs';
import { DecodeError } from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../codecs.js';
import type { FlowControl } from '../../common/FlowControl.js';
import { checkDecodeOptions, JsonlDecoder, type DecodeOptions } from './JsonlDecoder.js';
import { SubscriberSink } from './SubscriberSink.js';
import { stringifyPythonJson } from './pythonJson.js';

/**
 * What `fromJsonl` reads: a whole transcript, or its chunks from any
 * iterable (a Node `Readable` is an async iterable) or a web stream.
 */
export type JsonlSource =
  | string
  | Uint8Array
  | Iterable<string | Uint8Array>
  | AsyncIterable<string | Uint8Array>
  | ReadableStream<Uint8Array | string>;

/** Options of `fromJsonl`. */
export interface JsonlOptions extends DecodeOptions {
  /** While paused, an asynchronous source is not read (see `eachEvent`). */
  readonly flow?: FlowControl;
}

type Chunk = string | Uint8Array;

/** Sources that one reading uses up, marked when a subscription starts reading them. */
const readOnce = new WeakSet<object>();

/** A source that a second reading would find empty: a stream, or an iterator that is its own iterable. */
function isOneShot(source: object): boolean {
  if (isReadableStream(source) || typeof (source as { pipe?: unknown }).pipe === 'function') return true;
  const iterate =
    (source as { [Symbol.asyncIterator]?: () => unknown })[Symbol.asyncIterator] ??
    (source as { [Symbol.iterator]?: () => unknown })[Symbol.iterator];
  return typeof iterate === 'function' && 'next' in source;
}

/** `source`, or a clear error for a one-shot source that an earlier subscription already read. */
function claim(source: object): TypeError | undefined {
  if (!isOneShot(source)) return undefined;
  if (!readOnce.has(source)) {
    readOnce.add(source);
    return undefined;
  }
  return new TypeError(
    'fromJsonl: this source was read by an earlier subscription and a stream is read only once; ' +
      'pass a function that opens it, fromJsonl(() => createReadStream(path)), or use fromJsonlFile(path)',
  );
}

const UNSUPPORTED = 'fromJsonl: unsupported source; pass a string, bytes, an iterable or a ReadableStream';
/** A whole transcript is decoded this much at a time, so that its events are never all held at once. */
const PIECE = 1 << 20;

function isReadableStream(source: object): source is ReadableStream<Chunk> {
  return typeof (source as { getReader?: unknown }).getReader === 'function';
}

function* pieces(whole: string | Uint8Array): Generator<Chunk> {
  for (let at = 0; at < whole.length; at += PIECE) {
    yield typeof whole === 'string' ? whole.slice(at, at + PIECE) : whole.subarray(at, at + PIECE);
  }
}

/**
 * Decodes a JSONL transcript into a cold Observable of events.
 *
 * Each subscription reads the source from the start and emits each event as
 * soon as its line is complete. A stream can be read only once: pass a
 * function that opens it (`() => createReadStream(path)`), called at each
 * subscription, or a second subscription errors with a `TypeError`. Unsubscribing stops reading: an iterator is `return`ed, a
 * web stream's reader is cancelled. Bad lines go to `onDiagnostic`, or error
 * the Observable with a `DecodeError` when `strict` is set.
 *
 * ```ts
 * fromJsonl(fs.createReadStream('run.jsonl'), { onDiagnostic: console.warn })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function fromJsonl(
  source: JsonlSource | (() => JsonlSource),
  options: JsonlOptions & { keepUnknown: true },
): Observable<EvoEvent | UnknownEvent>;
export function fromJsonl(source: JsonlSource | (() => JsonlSource), options?: JsonlOptions): Observable<EvoEvent>;
export function fromJsonl(
  sourceOrOpen: JsonlSource | (() => JsonlSource),
  options: JsonlOptions = {},
): Observable<EvoEvent | UnknownEvent> {
  // Checked now, where the mistake is, rather than at each subscription.
  checkDecodeOptions(options, 'fromJsonl');
  return new Observable<EvoEvent | UnknownEvent>((subscriber) => {
    const source = typeof sourceOrOpen === 'function' ? sourceOrOpen() : sourceOrOpen;
    const decoder = new JsonlDecoder(options);
    const sink = new SubscriberSink(subscriber, options);
    /** Feeds one chunk, each event handed on as its line completes; false once the stream is over. */
    const feed = (chunk: Chunk): boolean => {
      const fatal = sink.feed(decoder, chunk);
      if (fatal) subscriber.error(new DecodeError(fatal));
      return !subscriber.closed;
    };
    const end = () => {
      const fatal = sink.finish(decoder);
      if (fatal) subscriber.error(new DecodeError(fatal));
      else subscriber.complete();
    };
    if (typeof source === 'string' || source instanceof Uint8Array)
      return readSync(pieces(source), feed, end, subscriber);
    if (typeof source !== 'object' || source === null) {
      subscriber.error(new TypeError(UNSUPPORTED));
      return undefined;
    }
    const used = claim(source);
    if (used) return subscriber.error(used);
    const reading = { feed, end, subscriber, flow: options.flow };
    if (isReadableStream(source)) return readAsync(readerIterator(source), reading);
    if (Symbol.asyncIterator in source) {
      const stop = readAsync(source[Symbol.asyncIterator](), reading);
      // A Node stream's iterator returns only once its pending read ends; one that never yields again is destroyed.
      const destroy = (source as { destroy?: () => void }).destroy;
      return typeof destroy === 'function' ? () => (stop(), destroy.call(source)) : stop;
    }
    if (Symbol.iterator in source) return readSync(source[Symbol.iterator](), feed, end, subscriber);
    subscriber.error(new TypeError(UNSUPPORTED));
    return undefined;
  });
}

function readSync(
  iterator: Iterator<Chunk>,
  feed: (chunk: Chunk) => boolean,
  end: () => void,
  subscriber: Subscriber<unknown>,
): () => void {
  try {
    for (;;) {
      const step = iterator.next();
      if (step.done) break;
      if (!feed(step.value)) break;
    }
    if (!subscriber.closed) end();
  } catch (err) {
    subscriber.error(err);
  }
  return () => iterator.return?.();
}

function readAsync(
  iterator: AsyncIterator<Chunk>,
  {
    feed,
    end,
    subscriber,
    flow,
  }: {
    feed: (chunk: Chunk) => boolean;
    end: () => void;
    subscriber: Subscriber<unknown>;
    flow: FlowControl | undefined;
  },
): () => void {
  (async () => {
    for (;;) {
      if (flow?.paused) await flow.resumed();
      if (subscriber.closed) return;
      const step = await iterator.next();
      if (subscriber.closed) return;
      if (step.done) break;
      if (!feed(step.value)) return;
    }
    end();
  })().catch((err: unknown) => subscriber.error(err));
  // Stops the producer: a Node Readable is destroyed, a generator finishes, a web stream is cancelled.
  return () => void iterator.return?.()?.catch(() => undefined);
}

/** A web stream's reader as an async iterator, so that it is read like any other; `return` cancels it. */
function readerIterator(stream: ReadableStream<Chunk>): AsyncIterator<Chunk> {
  const reader = stream.getReader();
  return {
    next: () => reader.read() as Promise<IteratorResult<Chunk>>,
    return: async () => {
      await reader.cancel();
      return { done: true, value: undefined };
    },
  };
}

/**
 * One event as one JSONL line, newline included; `fromJsonl` reads it back
 * to an equal event. Characters such as U+2028 stay raw: only `\n` ends a line.
 * A kept unknown event is written as it came (its `event`). Non-finite
 * numbers are written as Python writes them (`NaN`, `Infinity`,
 * `-Infinity`), which `fromJsonl` and Python read back but `JSON.parse` does
 * not; an integer beyond ±2^53 was rounded when read and is written rounded.
 *
 * ```ts
 * events$.pipe(map(toJsonl)).subscribe((line) => file.write(line));
 * ```
 */
export function toJsonl(event: EvoEvent | UnknownEvent): string {
  return `${stringifyPythonJson(event.type === 'unknown' ? event.event : event)}\n`;
}
