import { createReadStream } from 'node:fs';
import type { Observable } from 'rxjs';
import { fromJsonl, type JsonlOptions } from '../decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events.js';

/**
 * Bytes read at a time: Node streams read 64 KiB, and 1 MiB reads decode a
 * transcript faster (see BENCHMARKS.md, decoding).
 */
const BLOCK_BYTES = 1 << 20;

/**
 * A JSONL transcript file as a cold Observable of its events: each
 * subscription opens the file and reads it from the start, in 1 MiB blocks.
 * A file that cannot be opened errors the Observable with Node's error.
 *
 * ```ts
 * const summary = await lastValueFrom(fromJsonlFile('run.jsonl').pipe(summarize()));
 * ```
 */
export function fromJsonlFile(
  path: string | URL,
  options: JsonlOptions & { keepUnknown: true },
): Observable<EvoEvent | UnknownEvent>;
export function fromJsonlFile(path: string | URL, options?: JsonlOptions): Observable<EvoEvent>;
export function fromJsonlFile(path: string | URL, options: JsonlOptions = {}): Observable<EvoEvent | UnknownEvent> {
  if (typeof path !== 'string' && !(path instanceof URL)) {
    throw new TypeError(`fromJsonlFile: path must be a string or a file URL, got ${typeof path}`);
  }
  return fromJsonl(() => createReadStream(path, { highWaterMark: BLOCK_BYTES }), options);
}
