import { open } from 'node:fs/promises';
import type { Observable } from 'rxjs';
import { fromJsonl, type JsonlOptions } from '../events/decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';

/**
 * Bytes read at a time: Node streams read 64 KiB, and 1 MiB reads decode a
 * transcript faster (see BENCHMARKS.md, decoding).
 */
const BLOCK_BYTES = 1 << 20;

/**
 * The file's bytes, a block at a time, read into two buffers in turn: a
 * stream would allocate a new 1 MiB buffer for each read. The next block is
 * read into one while the decoder takes the other, so that the decoder does
 * not wait for the disk, nor for a thread of the pool on a busy machine. A
 * buffer is read into again only once the decoder has taken its block, and
 * the decoder copies what it keeps of a block (the start of a line). Leaving
 * the loop waits for the read under way, then closes the file.
 */
async function* blocks(path: string | URL): AsyncGenerator<Uint8Array, void, undefined> {
  const file = await open(path, 'r');
  let current = new Uint8Array(BLOCK_BYTES);
  let spare = new Uint8Array(BLOCK_BYTES);
  let reading: Promise<{ bytesRead: number }> | undefined;
  try {
    reading = file.read(current, 0, BLOCK_BYTES, null);
    for (;;) {
      const { bytesRead } = await reading;
      reading = undefined;
      if (bytesRead === 0) return;
      const block = current.subarray(0, bytesRead);
      [current, spare] = [spare, current];
      reading = file.read(current, 0, BLOCK_BYTES, null);
      yield block;
    }
  } finally {
    // A read left under way is waited for; its error, if any, is no one's now.
    await reading?.catch(() => undefined);
    await file.close();
  }
}

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
  return fromJsonl(() => blocks(path), options);
}
