// A slow HTTP reader of a run through JetStream, reading alone past
// `sharedReadBytes`: while it reads nothing, its consumer takes no more of the
// run from the broker, so the hub holds a bounded part of the run for it; once
// it reads again it gets the rest, every event once and in order.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowControl } from '../../src/common/FlowControl.js';
import { jetStreamRunHub, layoutOf } from '../../src/jetstream/index.js';
import { HIGH_WATER_BYTES } from '../../src/flow/ObservableByteSource.js';
import { PACED_PULL_MESSAGES } from '../../src/jetstream/read/PacedPull.js';
import { WRITE_BYTES } from '../../src/runs/http/FrameQueue.js';
import { runsHandler, type RunHub } from '../../src/runs/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { connectBroker, servedWorker, streamsFor, uniquePrefix } from '../jetstream/support.js';

/** Events of the run: some 1 KiB each, 12 MiB in all, far more than a socket's buffers on loopback take. */
const EVENTS = 12_000;
const FILLER = 'x'.repeat(1000);
const text = (i: number) => JSON.stringify({ type: 'text', content: `e${i} ${FILLER}` });
const DONE = JSON.stringify({ type: 'done', content: '', response: 'r' });

/** An HTTP/1.0 reader of `path` that reads nothing until `read()`, then all of the body until the server closes. */
function stalledReader(
  port: number,
  path: string,
): { socket: Socket; read(): Promise<{ head: number; body: string }> } {
  const socket = connect(port, '127.0.0.1', () =>
    socket.write(`GET ${path} HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`),
  );
  socket.pause();
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve, reject) => {
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  return {
    socket,
    read: async () => {
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.resume();
      await closed;
      const whole = Buffer.concat(chunks);
      const head = whole.indexOf('\r\n\r\n') + 4;
      return { head, body: whole.subarray(head).toString('utf8') };
    },
  };
}

describe('jetStreamRunHub: a reader that reads on alone and stops reading', () => {
  let nc: NatsConnection;
  let hub: RunHub;
  let server: Server;
  let port: number;
  let worker: ReturnType<typeof servedWorker>;
  let removeStreams: () => Promise<void>;
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hubflow-'));
  const prefix = uniquePrefix('hubflow');
  const transcript = join(dir, 'run.jsonl');
  const go = join(dir, 'go');
  /** The tap of each reader the hub was asked to follow, as the runs handler made it. */
  const flows: FlowControl[] = [];
  /** Each response the server made. */
  const responses: ServerResponse[] = [];

  beforeAll(async () => {
    nc = await connectBroker();
    removeStreams = await streamsFor(nc, prefix);
    writeFileSync(transcript, `${Array.from({ length: EVENTS }, (_, i) => text(i)).join('\n')}\n${DONE}\n`);
    // Two events, then the run waits for the reader to have come, then the rest.
    const steps = [{ lines: [text(0), text(1)] }, { waitForFile: go }, { transcript, from: 2 }];
    worker = servedWorker(nc, {
      prefix,
      runOptions: (request) => ({ prompt: request.prompt, ...fakeEvoSci(steps) }),
    });
    // A shared reading of 16 KiB: the reader goes on alone before its frames could reach the 64 KiB that pause it.
    const inner = jetStreamRunHub(nc, { prefix, sharedReadBytes: 16 * 1024 });
    hub = Object.assign(Object.create(inner) as RunHub, {
      follow: (id: string, options: Parameters<RunHub['follow']>[1] = {}) => {
        if (options.flow) flows.push(options.flow);
        return inner.follow(id, options);
      },
    });
    const handler = runsHandler(hub);
    server = createServer((req, res) => {
      responses.push(res);
      void handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    worker.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await hub.close();
    await removeStreams();
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The consumers on the events stream, as the broker has them. */
  const consumers = async (): Promise<ConsumerInfo[]> => {
    const jsm = await jetstreamManager(nc);
    return jsm.consumers.list(layoutOf({ prefix }).eventsStream).next();
  };

  it('takes no more from the broker while the reader reads nothing, then gives it every event once, in order', async () => {
    const { id } = await hub.start({ prompt: 'large' });
    const reader = stalledReader(port, `/runs/${id}/events`);
    await expect.poll(() => flows.length, { timeout: 10_000 }).toBe(1);
    writeFileSync(go, '');
    await expect.poll(async () => (await hub.status(id)).state, { timeout: 120_000, interval: 200 }).toBe('completed');
    // The run is stored whole. The reader's frames filled its socket and its queue: the hub paused its tap.
    await expect.poll(() => flows[0]!.paused, { timeout: 60_000 }).toBe(true);
    // Its consumer, the only one left, then has no pull waiting on the broker; or it read the whole run and is gone.
    const settled = async () => {
      const all = await consumers();
      const [only] = all;
      const stopped = all.length === 1 && only!.delivered.stream_seq > 0 && only!.num_waiting === 0;
      return all.length === 0 || stopped ? all : undefined;
    };
    await expect.poll(settled, { timeout: 60_000 }).toBeDefined();
    const [consumer] = (await settled())!;
    expect(flows[0]!.paused).toBe(true);
    // Most of the run is still on the broker, not in the hub: it took no more than its socket, 64 KiB and one pull.
    expect(consumer, 'the reader consumer read the whole run into the hub').toBeDefined();
    expect(consumer!.num_pending).toBeGreaterThan(0);
    expect(consumer!.delivered.consumer_seq).toBeLessThan(EVENTS / 2);
    // What the kernel took of the response so far: all its socket was given, but what Node still holds.
    const socket = responses[0]!.socket!;
    const sent = socket.bytesWritten - socket.writableLength;
    const { head, body } = await reader.read();
    const lines = body.split('\n').filter((line) => line !== '');
    // What the hub holds for the reader: the lines of the events it took (after the run's started record), less what left.
    const taken = consumer!.delivered.consumer_seq - 1;
    const held = lines.slice(0, taken).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0) - (sent - head);
    console.log(
      `stalled reader: ${taken} events taken from the broker (${consumer!.num_pending} messages left there), ${sent - head} bytes of them in the socket, ${held} held in the hub`,
    );
    // At most: the frames that paused it, one pull asked for before, and the socket's own buffer (16 KiB, and one write past it).
    const pull = PACED_PULL_MESSAGES * (Buffer.byteLength(lines[0]!) + 1);
    expect(held).toBeLessThanOrEqual(HIGH_WATER_BYTES + pull + 2 * WRITE_BYTES);
    const contents = lines.map((line) => (JSON.parse(line) as { content: string }).content.split(' ')[0]);
    expect(contents).toEqual([...Array.from({ length: EVENTS }, (_, i) => `e${i}`), '']);
    expect((JSON.parse(lines.at(-1)!) as { type: string }).type).toBe('done');
    await expect.poll(async () => (await consumers()).length, { timeout: 10_000 }).toBe(0);
  }, 240_000);
});
