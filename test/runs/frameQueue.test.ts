// A reader's frames written straight to a real `node:http` response: in a
// few large writes, in order, paused while the client does not read, and a
// write that throws ends its own response only.
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import { FrameQueue, WRITE_BYTES } from '../../src/runs/http/FrameQueue.js';
import type { SendFailure } from '../../src/runs/http/FrameQueue.js';

const frame = (i: number, size: number) => `${`frame ${i} `.padEnd(size - 1, '.')}\n`;

/** What the server saw of one response: each write's length and answer, and the frames handed to its queue. */
class Served {
  readonly writes: { bytes: number; room: boolean }[] = [];
  pushed = 0;
  pushedBytes = 0;
  readonly flow = new FlowControl();
  done: Promise<SendFailure> | undefined;

  get writtenBytes(): number {
    return this.writes.reduce((sum, w) => sum + w.bytes, 0);
  }

  /** Counts the response's writes (the real ones), and `throwAfter` writes later throws, as a failing middleware would. */
  watch(res: ServerResponse, throwAfter = Infinity): void {
    const write = res.write.bind(res) as (chunk: string) => boolean;
    res.write = ((chunk: string) => {
      if (this.writes.length >= throwAfter) throw new Error('the middleware failed');
      const room = write(chunk);
      this.writes.push({ bytes: chunk.length, room });
      return room;
    }) as typeof res.write;
  }

  /** Frames made while the queue is not paused, as a run's log hands them, until `count`; then the end. */
  produce(queue: FrameQueue, count: number, size: number): void {
    const pump = () => {
      while (this.pushed < count && !this.flow.paused) {
        const text = frame(this.pushed++, size);
        this.pushedBytes += text.length;
        queue.push(text);
      }
      if (this.pushed === count) queue.finish('end');
    };
    this.flow.watch((paused) => {
      if (!paused) pump();
    });
    pump();
  }
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** A server whose every response is a queue of `count` frames of `size` bytes. */
async function serve(count: number, size: number, throwOn?: string): Promise<{ port: number; served: Served[] }> {
  const served: Served[] = [];
  server = createServer((req, res) => {
    const one = new Served();
    served.push(one);
    res.writeHead(200, { 'content-type': 'text/plain' });
    one.watch(res, req.url === throwOn ? 1 : Infinity);
    const queue = new FrameQueue(res, one.flow);
    one.done = queue.done;
    one.produce(queue, count, size);
    void queue.done.then((failure) => failure && res.destroy());
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, served };
}

/** The body of `path`, read as it comes; `hold` is told once the response is there, and resolves when reading may go on. */
function read(port: number, path = '/', hold?: () => Promise<void>): Promise<{ body: string; error?: Error }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const req = request({ port, host: '127.0.0.1', path }, (res) => {
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ body: Buffer.concat(chunks).toString() }));
      res.on('error', (error) => resolve({ body: Buffer.concat(chunks).toString(), error }));
      if (hold) {
        res.pause();
        void hold().then(() => res.resume());
      }
    });
    req.on('error', (error) => resolve({ body: Buffer.concat(chunks).toString(), error }));
    req.end();
  });
}

const frames = (count: number, size: number) => Array.from({ length: count }, (_, i) => frame(i, size)).join('');

describe('FrameQueue', () => {
  it('sends every frame in order, in writes of up to 16 KiB rather than one per frame', async () => {
    const { port, served } = await serve(3000, 200);
    const { body } = await read(port);
    expect(body).toBe(frames(3000, 200));
    const [one] = served;
    expect(await one!.done).toBeUndefined();
    expect(Math.max(...one!.writes.map((w) => w.bytes))).toBeLessThanOrEqual(WRITE_BYTES);
    // 600 KB in 16 KiB writes is some 37; a write per frame would be 3,000.
    expect(one!.writes.length).toBeLessThan(100);
  });

  it('pauses its source while the client does not read, holding at most 64 KiB, and goes on when it reads', async () => {
    const count = 20_000;
    const { port, served } = await serve(count, 1024);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reading = read(port, '/', () => released);
    // The sign: the response said to wait (the socket and the client's buffers are full), and the source is paused.
    await expect.poll(() => served.length, { timeout: 10_000 }).toBe(1);
    const one = served[0]!;
    // Nothing changes then until the client reads: no 'drain' comes.
    await expect.poll(() => one.flow.paused && one.writes.some((w) => !w.room), { timeout: 10_000 }).toBe(true);
    expect(one.pushed).toBeLessThan(count);
    expect(one.pushedBytes - one.writtenBytes).toBeLessThanOrEqual(64 * 1024 + 1024);
    release();
    const { body } = await reading;
    expect(body).toBe(frames(count, 1024));
    expect(one.flow.paused).toBe(false);
  });

  it('ends only the response whose write throws: the other gets every frame, the process goes on', async () => {
    const { port, served } = await serve(500, 100, '/bad');
    const [bad, good] = await Promise.all([read(port, '/bad'), read(port, '/good')]);
    expect(good.body).toBe(frames(500, 100));
    expect(bad.error).toBeInstanceOf(Error);
    const failures = await Promise.all(served.map((s) => s.done!));
    expect(failures).toContainEqual({ error: new Error('the middleware failed') });
    expect(failures).toContainEqual(undefined);
    // Its frames were all made in one turn: none is written after the failure.
    expect(served.find((s) => s.writes.length <= 1)).toBeDefined();
  });

  it('leaves its source paused when the client goes away: the rest of the run is not made for no one', async () => {
    const count = 20_000;
    const { port, served } = await serve(count, 1024);
    let gone!: () => void;
    const client = request({ port, host: '127.0.0.1', path: '/' }, (res) => {
      res.pause();
      gone = () => res.destroy();
    });
    client.on('error', () => undefined);
    client.end();
    await expect.poll(() => served[0]?.flow.paused === true && gone !== undefined, { timeout: 10_000 }).toBe(true);
    const one = served[0]!;
    const made = one.pushed;
    gone();
    expect(await one.done).toBeUndefined();
    // A few turns for anything the close set going.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(one.pushed).toBe(made);
    expect(made).toBeLessThan(count);
  });
});
