// The browser benchmark's page: each variant reads a fresh fetch body of the
// transcript and counts its events.
import { Observable } from 'rxjs';
import { decodeLine, eventCodecs, fromJsonl } from 'evosci-rx/events';
import { BENCH_GLOBAL, type BenchPage, type PassResult, type Variant } from './protocol.js';

async function body(url: string): Promise<ReadableStream<Uint8Array<ArrayBuffer>>> {
  const response = await fetch(url, { cache: 'no-store' });
  if (!response.ok || response.body === null) throw new Error(`${url}: ${response.status}`);
  return response.body;
}

/** The floor: the bytes of the body, read and dropped. Counts bytes, not events. */
async function drain(url: string): Promise<number> {
  let bytes = 0;
  const reader = (await body(url)).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}

/** What a page writes by hand: TextDecoderStream, split on `\n`, JSON.parse each line. */
async function baseline(url: string): Promise<number> {
  let events = 0;
  let carry = '';
  const parse = (line: string) => {
    if (line.length === 0) return;
    const value = JSON.parse(line) as { type?: unknown };
    if (typeof value.type === 'string') events++;
  };
  const reader = (await body(url)).pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = carry + value;
    let start = 0;
    let end = text.indexOf('\n');
    while (end !== -1) {
      parse(text.slice(start, end));
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    carry = text.slice(start);
  }
  parse(carry);
  return events;
}

/** The library: every line decoded and validated into an event. */
async function library(url: string): Promise<number> {
  const source = await body(url);
  return new Promise((resolve, reject) => {
    let events = 0;
    fromJsonl(source, {
      onDiagnostic: (issue) => reject(new Error(`unexpected diagnostic: ${issue.toString()}`)),
    }).subscribe({
      next: () => events++,
      error: reject,
      complete: () => resolve(events),
    });
  });
}

const variants: Record<Variant, (url: string) => Promise<number>> = { drain, baseline, fromJsonl: library };

/** What a chunked body is: its chunks as fetch delivered them, and its lines. */
interface Held {
  readonly chunks: readonly Uint8Array[];
  readonly lines: readonly string[];
}

async function hold(url: string): Promise<Held> {
  const chunks: Uint8Array[] = [];
  const reader = (await body(url)).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  const lines: string[] = [];
  const utf8 = new TextDecoder();
  let carry = '';
  for (const chunk of chunks) {
    const text = carry + utf8.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      lines.push(text.slice(start, end));
      start = end + 1;
    }
    carry = text.slice(start);
  }
  return { chunks, lines };
}

const LF = 0x0a;
const BATCH = 64 * 1024;

/** The stages, each alone; what each returns keeps its work from being optimised away. */
const stages: Readonly<Record<string, (held: Held) => number>> = {
  'UTF-8 decode, streaming (as TextDecoderStream)': ({ chunks }) => {
    const utf8 = new TextDecoder();
    let n = 0;
    for (const chunk of chunks) n += utf8.decode(chunk, { stream: true }).length;
    return n;
  },
  'UTF-8 decode, cut at newlines in 64 KiB batches (as JsonlDecoder)': ({ chunks }) => {
    const utf8 = new TextDecoder();
    let n = 0;
    for (const chunk of chunks) {
      for (let start = 0; start < chunk.length;) {
        let cut = chunk.length - start > BATCH ? chunk.lastIndexOf(LF, start + BATCH - 1) : chunk.lastIndexOf(LF);
        if (cut < start) cut = chunk.indexOf(LF, start + BATCH);
        if (cut === -1) break;
        n += utf8.decode(chunk.subarray(start, cut + 1)).length;
        start = cut + 1;
      }
    }
    return n;
  },
  'JSON.parse of each line': ({ lines }) => {
    let n = 0;
    for (const line of lines) if (typeof (JSON.parse(line) as { type?: unknown }).type === 'string') n++;
    return n;
  },
  'JSON.parse + the codec guard, eventCodecs[type].is': ({ lines }) => {
    let n = 0;
    for (const line of lines) {
      const value = JSON.parse(line) as { type: string };
      if ((eventCodecs as Record<string, { is(v: unknown): boolean }>)[value.type]?.is(value)) n++;
    }
    return n;
  },
  'decodeLine of each line': ({ lines }) => {
    let n = 0;
    for (let i = 0; i < lines.length; i++) if (decodeLine(lines[i]!, i + 1) !== undefined) n++;
    return n;
  },
  'one rxjs next() per line': ({ lines }) => {
    let n = 0;
    new Observable<string>((subscriber) => {
      for (const line of lines) subscriber.next(line);
      subscriber.complete();
    }).subscribe(() => n++);
    return n;
  },
  'baseline: streaming decode + split + JSON.parse': ({ chunks }) => {
    const utf8 = new TextDecoder();
    let carry = '';
    let n = 0;
    for (const chunk of chunks) {
      const text = carry + utf8.decode(chunk, { stream: true });
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        if (typeof (JSON.parse(text.slice(start, end)) as { type?: unknown }).type === 'string') n++;
        start = end + 1;
      }
      carry = text.slice(start);
    }
    return n;
  },
  'fromJsonl over the same chunks': ({ chunks }) => {
    let n = 0;
    fromJsonl(chunks).subscribe(() => n++);
    return n;
  },
};

const page: BenchPage = {
  async run(variant, url): Promise<PassResult> {
    const t0 = performance.now();
    const events = await variants[variant](url);
    return { events, ms: performance.now() - t0 };
  },
  async breakdown(url, rounds) {
    const held = await hold(url);
    const times = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      for (const [name, stage] of Object.entries(stages)) {
        page.gc();
        const t0 = performance.now();
        stage(held);
        const list = times.get(name) ?? [];
        list.push(performance.now() - t0);
        times.set(name, list);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    return Object.fromEntries([...times].map(([name, xs]) => [name, median(xs)]));
  },
  gc() {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error('no gc(): start Chromium with --js-flags=--expose-gc');
    gc();
  },
};
Object.assign(globalThis, { [BENCH_GLOBAL]: page });
