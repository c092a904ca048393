// A slow link to the broker: a loopback TCP proxy whose client → server
// direction moves at most so many bytes a second (what a worker publishes),
// while answers come back at once. TCP's own backpressure does the rest: the
// proxy stops reading the client once a little is queued, as a full window would.
import { connect, createServer, type Server, type Socket } from 'node:net';

/** How often the link moves what its rate allows. */
const TICK_MS = 10;
/** Bytes queued in the proxy before it stops reading the client. */
const QUEUED_HIGH_WATER = 64 * 1024;

/** One throttled client → server direction. */
class SlowDirection {
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private allowance = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    bytesPerSecond: number,
  ) {
    from.on('data', (chunk: Buffer) => {
      this.queue.push(chunk);
      this.queued += chunk.length;
      if (this.queued >= QUEUED_HIGH_WATER) from.pause();
    });
    this.timer = setInterval(() => this.tick((bytesPerSecond * TICK_MS) / 1000), TICK_MS);
  }

  dispose(): void {
    clearInterval(this.timer);
  }

  private tick(bytes: number): void {
    // Unused allowance is not saved up past one tick: the rate holds over any window.
    this.allowance = Math.min(this.allowance + bytes, 2 * bytes);
    while (this.queue.length > 0 && this.allowance > 0 && !this.to.destroyed) {
      const head = this.queue[0]!;
      const n = Math.min(head.length, Math.floor(this.allowance));
      if (n === 0) break;
      this.to.write(head.subarray(0, n));
      this.allowance -= n;
      this.queued -= n;
      if (n === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(n);
    }
    if (this.queued < QUEUED_HIGH_WATER / 2 && this.from.isPaused()) this.from.resume();
  }
}

/** A proxy to `target` (`host:port`) whose client → server direction moves at most `bytesPerSecond`. */
export class ThrottledProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string, bytesPerSecond: number): Promise<ThrottledProxy> {
    const [host = '127.0.0.1', port] = target.split(':');
    const joined: { proxy?: ThrottledProxy } = {};
    const server = createServer((client) => joined.proxy?.join(client, connect(Number(port), host), bytesPerSecond));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    joined.proxy = new ThrottledProxy(server, `127.0.0.1:${(server.address() as { port: number }).port}`);
    return joined.proxy;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private join(client: Socket, upstream: Socket, bytesPerSecond: number): void {
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      this.sockets.add(socket);
    }
    const slow = new SlowDirection(client, upstream, bytesPerSecond);
    upstream.pipe(client);
    const end = () => {
      slow.dispose();
      for (const socket of [client, upstream]) {
        this.sockets.delete(socket);
        socket.destroy();
      }
    };
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  }
}
