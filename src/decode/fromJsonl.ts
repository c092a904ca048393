import { Observable, type Subscriber } from 'rxjs';
import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';
import { DecodeError } from '../errors/DecodeError.js';
import type { DecodeOptions } from './DecodeOptions.js';
import type { JsonlSource } from './JsonlSource.js';
import { JsonlDecoder } from './JsonlDecoder.js';

type Chunk = string | Uint8Array;

const UNSUPPORTED = 'fromJsonl: unsupported source; pass a string, bytes, an iterable or a ReadableStream';

function isReadableStream(source: object): source is ReadableStream<Chunk> {
  return typeof (source as { getReader?: unknown }).getReader === 'function';
}

/**
 * Decodes a JSONL transcript into a cold Observable of events.
 *
 * Each subscription reads the source from the start (for a one-shot source
 * such as a Node stream, subscribe once) and emits each event as soon as its
 * line is complete. Unsubscribing stops reading: an iterator is `return`ed, a
 * web stream's reader is cancelled. Bad lines go to `onDiagnostic`, or error
 * the Observable with a `DecodeError` when `strict` is set.
 *
 * ```ts
 * fromJsonl(fs.createReadStream('run.jsonl'), { onDiagnostic: console.warn })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function fromJsonl(source: JsonlSource, options: DecodeOptions & { keepUnknown: true }): Observable<EvoEvent | UnknownEvent>;
export function fromJsonl(source: JsonlSource, options?: DecodeOptions): Observable<EvoEvent>;
export function fromJsonl(source: JsonlSource, options: DecodeOptions = {}): Observable<EvoEvent | UnknownEvent> {
  return new Observable<EvoEvent | UnknownEvent>((subscriber) => {
    const decoder = new JsonlDecoder(
      {
        event: (event) => {
          subscriber.next(event);
          // Unsubscribed from inside `next` (take, takeUntil…): the rest of this chunk is not read.
          if (subscriber.closed) decoder.stop();
        },
        issue: (issue) => {
          if (options.strict) {
            decoder.stop();
            subscriber.error(new DecodeError(issue));
          } else options.onDiagnostic?.(issue);
        },
      },
      options,
    );
    if (typeof source === 'string' || source instanceof Uint8Array) {
      decoder.write(source);
      finish(decoder, subscriber);
      return () => decoder.stop();
    }
    if (typeof source !== 'object' || source === null) {
      subscriber.error(new TypeError(UNSUPPORTED));
      return undefined;
    }
    if (isReadableStream(source)) return readAsync(readerIterator(source), decoder, subscriber);
    if (Symbol.asyncIterator in source) return readAsync(source[Symbol.asyncIterator](), decoder, subscriber);
    if (Symbol.iterator in source) {
      const iterator = source[Symbol.iterator]();
      try {
        while (!subscriber.closed) {
          const step = iterator.next();
          if (step.done) break;
          decoder.write(step.value);
        }
        finish(decoder, subscriber);
      } catch (err) {
        subscriber.error(err);
      }
      return () => {
        decoder.stop();
        iterator.return?.();
      };
    }
    subscriber.error(new TypeError(UNSUPPORTED));
    return undefined;
  });
}

function finish(decoder: JsonlDecoder, subscriber: Subscriber<unknown>): void {
  if (subscriber.closed) return;
  decoder.end();
  subscriber.complete();
}

function readAsync(
  iterator: AsyncIterator<Chunk>,
  decoder: JsonlDecoder,
  subscriber: Subscriber<unknown>,
): () => void {
  (async () => {
    for (;;) {
      const step = await iterator.next();
      if (subscriber.closed) return;
      if (step.done) break;
      decoder.write(step.value);
    }
    finish(decoder, subscriber);
  })().catch((err: unknown) => subscriber.error(err));
  return () => {
    decoder.stop();
    // Stops the producer: a Node Readable is destroyed, a generator finishes, a web stream is cancelled.
    iterator.return?.()?.catch(() => undefined);
  };
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
