// The browser benchmark's page: each variant reads a fresh fetch body of the
// transcript and counts its events.
import { fromJsonl } from 'evosci-rx/events';
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
    fromJsonl(source, { onDiagnostic: (issue) => reject(new Error(`unexpected diagnostic: ${issue}`)) }).subscribe({
      next: () => events++,
      error: reject,
      complete: () => resolve(events),
    });
  });
}

const variants: Record<Variant, (url: string) => Promise<number>> = { drain, baseline, fromJsonl: library };

const page: BenchPage = {
  async run(variant, url): Promise<PassResult> {
    const t0 = performance.now();
    const events = await variants[variant](url);
    return { events, ms: performance.now() - t0 };
  },
  gc() {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error('no gc(): start Chromium with --js-flags=--expose-gc');
    gc();
  },
};
Object.assign(globalThis, { [BENCH_GLOBAL]: page });
