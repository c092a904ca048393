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
