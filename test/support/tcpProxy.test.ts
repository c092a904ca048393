// The test proxy's delay: bytes arrive whole and in order through a delayed
// link, however many wait in it, and a round trip takes at least the two delays.
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from './tcpProxy.js';

const DELAY_MS = 20;

/** Reads from `socket` until `length` bytes have come. */
function receive(socket: Socket, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  return new Promise((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= length) resolve(Buffer.concat(chunks));
    });
  });
}

describe('a TcpProxy with a delay', () => {
  let echo: Server;
  let proxy: TcpProxy;

  beforeAll(async () => {
    echo = createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await TcpProxy.start(`127.0.0.1:${(echo.address() as { port: number }).port}`, { delayMs: DELAY_MS });
  });
  afterAll(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  const open = async (): Promise<Socket> => {
    const [host, port] = proxy.url.split(':');
    const socket = connect(Number(port), host);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    return socket;
  };

  it('moves 16 MiB both ways whole and in order, more than it holds before it pushes back', async () => {
    const socket = await open();
    const sent = randomBytes(16 * 1024 * 1024);
    const echoed = receive(socket, sent.length);
    socket.write(sent);
    expect((await echoed).equals(sent)).toBe(true);
    socket.destroy();
  });

  it('holds each chunk for its delay each way', async () => {
    const socket = await open();
    const started = performance.now();
    const echoed = receive(socket, 4);
    socket.write('ping');
    expect((await echoed).toString()).toBe('ping');
    // A timer never fires early by more than its clock's millisecond.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * (DELAY_MS - 1));
    socket.destroy();
  });
});
