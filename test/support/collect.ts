import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import type { DecodeIssue, EvoEvent, UnknownEvent } from '../../src/index.js';
import type { DecodeSink, JsonlDecoder } from '../../src/events/decode/JsonlDecoder.js';

/** Absolute path of a file in `test/fixtures`, or of `examples/…` when the name says so. */
export function fixturePath(name: string): string {
  return fileURLToPath(
    new URL(name.startsWith('examples/') ? `../../${name}` : `../fixtures/${name}`, import.meta.url),
  );
}

/** The bytes of a fixture transcript. */
export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath(name)));
}

/**
 * The parsed `*.truth.json` written beside a fixture by `test/fixtures/generate.ts` (its `Truth` type is in `producer.ts`).
 * A value plain JSON cannot hold is written there as `{"$py": "NaN"}` (or `Infinity`, `-Infinity`, the digits of an
 * integer beyond 2^53): it is read as a JavaScript client gets it, the number, rounded for the integer.
 */
export function fixtureTruth<T = Record<string, unknown>>(name: string): T {
  const text = readFileSync(fixturePath(name.replace(/\.jsonl$/, '.truth.json')), 'utf8');
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const keys = Object.keys(value);
    return keys.length === 1 && keys[0] === '$py' ? Number((value as { $py: string }).$py) : value;
  }) as T;
}

/** Every value of a finite Observable. */
export function collect<T>(source$: Observable<T>): Promise<T[]> {
  return lastValueFrom(source$.pipe(toArray()));
}

/** A diagnostics sink for `onDiagnostic`. */
export function diagnostics(): { issues: DecodeIssue[]; onDiagnostic: (issue: DecodeIssue) => void } {
  const issues: DecodeIssue[] = [];
  return { issues, onDiagnostic: (issue) => issues.push(issue) };
}

/** What decoding completed, in stream order: events, and issues for the lines that did not decode. */
export type Decoded = EvoEvent | UnknownEvent | DecodeIssue;

/** A decoder fed chunk by chunk, each call giving what that chunk (or the end) completed, in order. */
export class DecodedChunks implements DecodeSink {
  readonly stopped = false;
  private items: Decoded[] = [];

  constructor(readonly decoder: JsonlDecoder) {}

  write(chunk: Uint8Array | string): Decoded[] {
    this.items = [];
    this.decoder.feed(chunk, this);
    return this.items;
  }

  end(): Decoded[] {
    this.items = [];
    this.decoder.finish(this);
    return this.items;
  }

  event(event: EvoEvent | UnknownEvent): void {
    this.items.push(event);
  }

  issue(issue: DecodeIssue): void {
    this.items.push(issue);
  }
}
