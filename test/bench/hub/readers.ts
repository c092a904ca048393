// The readers of hub.bench.ts, in a process of their own: N SSE connections
// to one run's events, each checking that its frames come in order, from
// id 0 to the last, then `end`. Prints `{"connected": N}` once every
// response's headers have come; with <holdAt>, `{"holding": N}` once every
// reader has read N frames; then its figures as one JSON line.
//
//   node --import tsx test/bench/hub/readers.ts <url> <readers> <events> [holdAt]
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [url = '', readers = '1', events = '0', holdAt = '0'] = process.argv.slice(2);
const count = Number(readers);
const expected = Number(events);
const holding = Number(holdAt);
let readersAtHold = 0;
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const now = () => performance.timeOrigin + performance.now();
const STAMP = '"written_at":';

/** One reader's place in its stream: the frames it has read, and what was left of a frame cut by a chunk. */
class Reader {
  next = 0;
  ended = false;
  private rest = '';

  constructor(
    private readonly latencies: number[] | undefined,
    private readonly fail: (why: string) => void,
  ) {}

  /** Reads the frames the chunk completes; each must be the next id, or the `end` after the last. */
  read(chunk: string): void {
    const text = this.rest + chunk;
    let at = 0;
    for (let stop = text.indexOf('\n\n', at); stop !== -1; stop = text.indexOf('\n\n', at)) {
      this.frame(text, at, stop);
      at = stop + 2;
    }
    this.rest = text.slice(at);
  }

  private frame(text: string, start: number, stop: number): void {
    if (text.startsWith('event: end', start)) {
      if (this.next !== expected) this.fail(`end after ${this.next} events`);
      this.ended = true;
      return;
    }
    if (text.startsWith(':', start)) return;
    if (!text.startsWith('id: ', start))
      return this.fail(`a frame that is not an event: ${text.slice(start, start + 80)}`);
    const id = Number(text.slice(start + 4, text.indexOf('\n', start)));
    if (id !== this.next) return this.fail(`event ${id} where ${this.next} was due`);
    this.next++;
    if (this.next === holding && ++readersAtHold === count) console.log(JSON.stringify({ holding }));
    if (this.latencies) {
      const stamp = text.lastIndexOf(STAMP, stop);
      if (stamp > start) this.latencies.push(now() - Number.parseFloat(text.slice(stamp + STAMP.length, stop)));
    }
  }
}

const latencies: number[] = [];
let connected = 0;
let done = 0;
let firstFrame: number | undefined;
const started = now();
const failures: string[] = [];
const finish = () => {
  const ended = now();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  console.log(
    JSON.stringify({
      started,
      firstFrame,
      ended,
      failures: failures.slice(0, 5),
      failed: failures.length,
      p50: at(0.5),
      p99: at(0.99),
    }),
  );
  process.exit(0);
};

for (let i = 0; i < count; i++) {
  const reader = new Reader(i % 10 === 0 ? latencies : undefined, (why) => failures.push(`reader ${i}: ${why}`));
  const req = request(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
    if (++connected === count) console.log(JSON.stringify({ connected }));
    res.setEncoding('latin1');
    res.on('data', (chunk: string) => {
      firstFrame ??= now();
      reader.read(chunk);
    });
    res.on('end', () => {
      if (!reader.ended) failures.push(`reader ${i}: the body ended after ${reader.next} events, without its end`);
      if (++done === count) finish();
    });
  });
  req.on('error', (err) => {
    failures.push(`reader ${i}: ${err.message}`);
    if (++done === count) finish();
  });
  req.end();
}
