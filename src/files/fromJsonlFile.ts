import { open } from 'node:fs/promises';
import type { Observable } from 'rxjs';
import { fromJsonl, type JsonlOptions } from '../decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events.js';

/**
 * Bytes read at a time. Decoding 100 MB of transcript, 1 MiB reads cost less
 * than Node streams' 64 KiB (see BENCHMARKS.md); larger ones gain nothing more.
 */
const BLOCK_BYTES = 1 << 20;

/** A file's bytes in blocks; closes it when done or abandoned. Each block is a buffer of its own: the decoder may keep one. */
async function* blocksOf(path: string | URL): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r');
  try {
    for (;;) {
      const block = Buffer.allocUnsafe(BLOCK_BYTES);
      const { bytesRead } = await file.read(block, 0, BLOCK_BYTES, null);
      if (bytesRead === 0) return;
      yield block.subarray(0, bytesRead);
    }
  } finally {
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
  return fromJsonl(() => blocksOf(path), options);
}
