import { toJsonl } from '../events/decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { ObservableByteSource, type FlowSource } from './ObservableByteSource.js';

/**
 * A run's events as a web `ReadableStream` of JSONL bytes: a `Response` body
 * (`new Response(toJsonlStream(run$))`), or, in Node's `http`,
 * `Readable.fromWeb(toJsonlStream(run$)).pipe(res)`. A reader that falls
 * 64 KiB behind pauses a source given as a function of its `FlowControl`.
 * Cancelling the stream (the client went away) unsubscribes, which stops a
 * run's process. An error of the source errors the stream.
 *
 * ```ts
 * return new Response(toJsonlStream((flow) => run({ prompt, flow })), {
 *   headers: { 'content-type': 'application/x-ndjson' },
 * });
 * ```
 */
export function toJsonlStream(source: FlowSource<EvoEvent | UnknownEvent>): ReadableStream<Uint8Array> {
  return new ReadableStream(
    new ObservableByteSource(source, { frame: toJsonl, complete: () => undefined }),
    // Chunks wait in the source, which knows how to pause what feeds them.
    { highWaterMark: 0 },
  );
}
