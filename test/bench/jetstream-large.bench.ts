/**
 * Large events through JetStream on a server with the default max_payload
 * (1 MiB), against the nats client alone and against JetStream's Object
 * Store, in the same process and against the same broker (nats-server at
 * 127.0.0.1:4222, or $EVOSCI_RX_NATS):
 *
 *   (raw)  the client publishes each event as messages of at most
 *          max_payload − 4 KiB (at most 256 awaiting their ack), an ordered
 *          consumer on another connection reads them back (pulls of at most
 *          16 MiB) and joins and parses each event
 *   (obj)  Object Store (`@nats-io/obj`, if installed): `putBlob` of each event
 *          (128 KiB chunks, each awaited: its own protocol), `getBlob` of
 *          each on another connection
 *   (ours) events → publishTo → JetStream (as parts) → fromJetStream on
 *          another connection, decoded and validated like run(); and the same
 *          from run() of the fake CLI writing the lines, timed from its first event
 *
 * Every variant writes into a fresh stream (bucket) with file storage, and
 * reads back what it wrote, checked byte for byte; rounds are interleaved and
 * the medians compared. Then the small events of the run still pass alone:
 * their throughput is `jetstream.bench.ts`'s.
 *
 * ```bash
 * npx tsx test/bench/jetstream-large.bench.ts                    # 8 events of 8 MB, 3 rounds
 * npx tsx test/bench/jetstream-large.bench.ts --size 48 --count 2
 * npx tsx test/bench/jetstream-large.bench.ts --smoke            # 2 events of 2 MB, 1 round
 * ```
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { from, lastValueFrom, tap, toArray, type Observable } from 'rxjs';
import { toJsonl } from '../../src/events/decode/jsonl.js';
import { FlowControl } from '../../src/common/FlowControl.js';
import type { EvoEvent } from '../../src/events/codecs.js';
import { run } from '../../src/process/run.js';
import { ensureStreams, fromJetStream, layoutOf, publishTo } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { median, table } from './report.js';

const { values: flags } = parseArgs({
  options: {
    size: { type: 'string' },
    count: { type: 'string' },
    rounds: { type: 'string' },
    smoke: { type: 'boolean', default: false },
  },
});
const MB = 1_000_000;
const size = Number(flags.size ?? (flags.smoke ? 2 : 8)) * MB;
const count = Number(flags.count ?? (flags.smoke ? 2 : 8));
const rounds = Number(flags.rounds ?? (flags.smoke ? 1 : 3));
const server = process.env['EVOSCI_RX_NATS'] ?? '127.0.0.1:4222';
const WINDOW = 256;

// Events of a real shape: `write_file` calls whose arguments carry a whole file; then the run's end.
const events: EvoEvent[] = [
  ...Array.from({ length: count }, (_, i) => ({
    type: 'tool_call' as const,
    name: 'write_file',
    args: { path: `notes-${i}.md`, content: `${i}`.padEnd(size, 'abcdefghij') },
    id: `call_${i}`,
  })),
  { type: 'done', content: 'ok', response: 'ok' },
];
const payloads = events.map((e) => Buffer.from(toJsonl(e)));
const bytes = payloads.reduce((sum, p) => sum + p.length, 0);
const transcript = join(mkdtempSync(join(tmpdir(), 'evosci-rx-bench-')), 'large.jsonl');
writeFileSync(transcript, payloads.join(''));

const connectTo = () => connect({ servers: server, timeout: 3000, noAsyncTraces: true });
let writer: NatsConnection;
let reader: NatsConnection;
try {
  [writer, reader] = [await connectTo(), await connectTo()];
} catch (err) {
  console.error(`jetstream-large.bench needs nats-server -js at ${server}: ${(err as Error).message}`);
  process.exit(1);
}
const jsm = await jetstreamManager(writer);
const partBytes = writer.info!.max_payload - 4096;
let streamNumber = 0;

/** Seconds of one pass: until the last event is stored (acknowledged), and until it is read back. */
interface Seconds {
  readonly published: number;
  readonly read: number;
}

/** Throws unless the payloads read back are the ones written. */
function check(read: readonly Uint8Array[], what: string): void {
  if (read.length !== payloads.length || read.some((p, i) => !Buffer.from(p).equals(payloads[i]!)))
    throw new Error(`${what}: the events read back differ from those written`);
}

/** A fresh prefix with file storage, deleted after the pass. */
async function fresh<T>(pass: (prefix: string) => Promise<T>): Promise<T> {
  const prefix = `bench-large-${process.pid}-${streamNumber++}`;
  await ensureStreams(writer, { prefix, storage: 'file' });
  try {
    return await pass(prefix);
  } finally {
    const layout = layoutOf({ prefix });
    for (const name of [layout.eventsStream, layout.requestsStream]) await jsm.streams.delete(name).catch(() => false);
  }
}

/** The client alone: every event as messages of at most max_payload, ≤ WINDOW awaiting acks; an ordered consumer joins them. */
function raw(): Promise<Seconds> {
  return fresh(async (prefix) => {
    const subject = layoutOf({ prefix }).attemptSubject('raw', 1);
    const messages = payloads.flatMap((p, event) =>
      Array.from({ length: Math.ceil(p.length / partBytes) }, (_, i) => ({
        event,
        data: p.subarray(i * partBytes, (i + 1) * partBytes),
      })),
    );
    const consumer = await jetstream(reader).consumers.get(layoutOf({ prefix }).eventsStream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.All,
    });
    const started = performance.now();
    const chunks: Uint8Array[][] = payloads.map(() => []);
    let received = 0;
    const all = new Promise<void>((resolve) => {
      void consumer.consume({
        // Pulls bounded in bytes: 100 messages of 1 MiB (the client's default pull) outrun the server's max_pending.
        max_bytes: 16 * 1024 * 1024,
        callback: (m) => {
          chunks[messages[received]!.event]!.push(m.data);
          if (++received === messages.length) resolve();
        },
      });
    });
    await windowed(
      messages.map(
        ({ data }) =>
          () =>
            jetstream(writer).publish(subject, data),
      ),
      WINDOW,
    );
    const published = (performance.now() - started) / 1000;
    await all;
    const read = (performance.now() - started) / 1000;
    await consumer.delete().catch(() => undefined);
    // Parsed, as the small-event benchmark's baseline parses each message: a reader needs the event.
    const joined = chunks.map((c) => Buffer.concat(c));
    for (const p of joined) JSON.parse(p.toString());
    check(joined, 'raw');
    return { published, read };
  });
}

/** Runs the tasks in order with at most `window` in flight. */
async function windowed(tasks: (() => Promise<unknown>)[], window: number): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  for (const task of tasks) {
    if (inFlight.size >= window) await Promise.race(inFlight);
    const p: Promise<unknown> = task().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
}

/** What this benchmark uses of `@nats-io/obj`, which it loads only if it is installed. */
interface ObjectStoreModule {
  Objm: new (nc: NatsConnection) => {
    create(name: string, options: { storage: string }): Promise<ObjectStore>;
    open(name: string): Promise<ObjectStore>;
  };
}
interface ObjectStore {
  putBlob(meta: { name: string }, data: Uint8Array): Promise<unknown>;
  getBlob(name: string): Promise<Uint8Array | null>;
  destroy(): Promise<boolean>;
}

/** Object Store's own put and get, if `@nats-io/obj` is installed. */
async function objectStore(): Promise<(() => Promise<Seconds>) | undefined> {
  // A name in a variable: the benchmark compiles and runs without the package.
  const name = '@nats-io/obj';
  let obj: ObjectStoreModule;
  try {
    obj = (await import(name)) as ObjectStoreModule;
  } catch {
    return undefined;
  }
  return async () => {
    const bucket = `bench-large-${process.pid}-${streamNumber++}`;
    const os = await new obj.Objm(writer).create(bucket, { storage: 'file' });
    try {
      const started = performance.now();
      for (const [i, p] of payloads.entries()) await os.putBlob({ name: `e${i}` }, p);
      const published = (performance.now() - started) / 1000;
      const theirs = await new obj.Objm(reader).open(bucket);
      const read: Uint8Array[] = [];
      for (let i = 0; i < payloads.length; i++) read.push((await theirs.getBlob(`e${i}`))!);
      const seconds = (performance.now() - started) / 1000;
      check(read, 'obj');
      return { published, read: seconds };
    } finally {
      await os.destroy().catch(() => false);
    }
  };
}

/**
 * Events → publishTo → fromJetStream: `source` gives the events, timed from
 * the first it emits. A source that cannot wait (an array) is given room for
 * all of them; the CLI is paused as a worker pauses it.
 */
function ours(source: (flow: FlowControl) => Observable<EvoEvent>): Promise<Seconds> {
  return fresh(async (prefix) => {
    let started = 0;
    const flow = new FlowControl();
    const remote = lastValueFrom(fromJetStream(reader, 'ours', { prefix }).pipe(toArray()));
    const room = { maxBufferBytes: Math.max(64 * 1024 * 1024, 2 * bytes), flow };
    await lastValueFrom(
      source(flow).pipe(
        tap(() => (started ||= performance.now())),
        publishTo(writer, 'ours', { prefix, maxPendingAcks: WINDOW, ...room }),
      ),
    );
    const published = (performance.now() - started) / 1000;
    const read = await remote;
    const seconds = (performance.now() - started) / 1000;
    check(
      read.map((e) => Buffer.from(toJsonl(e))),
      'ours',
    );
    return { published, read: seconds };
  });
}

const variants: [string, () => Promise<Seconds>][] = [
  ['(raw)  client, parts of max_payload', raw],
  ['(ours) events → publishTo → fromJetStream', () => ours(() => from(events))],
  [
    '(ours) run() → publishTo → fromJetStream',
    () => ours((flow) => run({ prompt: 'bench', flow, ...fakeEvoSci([{ transcript }]) })),
  ],
];
const obj = await objectStore();
if (obj) variants.splice(1, 0, ['(obj)  Object Store putBlob / getBlob', obj]);

// One untimed warm-up of each, then the rounds interleaved.
for (const [, pass] of variants) await pass();
const times = variants.map(() => [] as Seconds[]);
for (let r = 0; r < rounds; r++) for (const [i, [, pass]] of variants.entries()) times[i]!.push(await pass());

console.log(
  `JetStream large events: ${count} events of ${size / MB} MB (${(bytes / MB).toFixed(1)} MB), max_payload ${writer.info!.max_payload}, ${rounds} round(s), broker ${server}, node ${process.version}`,
);
if (!obj) console.log('  (obj) skipped: @nats-io/obj is not installed');
const rate = (s: number) => `${(bytes / MB / s).toFixed(1)} MB/s`;
const rows = variants.map(([name], i) => {
  const [published, read] = [median(times[i]!.map((t) => t.published)), median(times[i]!.map((t) => t.read))];
  return [name, `${published.toFixed(3)} s`, rate(published), `${read.toFixed(3)} s`, rate(read)];
});
console.log(table(['variant', 'stored', 'stored MB/s', 'read back', 'read back MB/s'], rows));

await writer.close();
await reader.close();
rmSync(dirname(transcript), { recursive: true, force: true });
