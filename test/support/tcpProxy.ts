import { connect, createServer, type Server, type Socket } from 'node:net';
import { ProxyLink } from './proxyLink.js';

/** Options of a `TcpProxy`. */
export interface TcpProxyOptions {
  /** Milliseconds each chunk is held, in each direction: half the round-trip time the proxy adds. Default 0. */
  readonly delayMs?: number;
}

/**
 * A loopback TCP proxy in front of a server, to break or slow one client's
 * link: `stall()` stops moving bytes both ways (the connection stays open and
 * every call waits), `resume()` moves them again, `cut()` closes every
 * connection (the client reconnects through the proxy); `delayMs` holds every
 * chunk that long each way, in order.
 */
export class TcpProxy {
  private readonly pairs = new Map<[Socket, Socket], ProxyLink[]>();
  private stalled = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly delayMs: number,
  ) {}

  /** A proxy on a free loopback port to `target` (`host:port`). */
  static async start(target: string, options: TcpProxyOptions = {}): Promise<TcpProxy> {
    const [host = '127.0.0.1', port] = target.split(':');
    const delayMs = options.delayMs ?? 0;
    if (!(delayMs >= 0)) throw new TypeError(`delayMs must be ≥ 0, got ${String(delayMs)}`);
    const joined: { proxy?: TcpProxy } = {};
    const server = createServer((client) => joined.proxy?.join(client, connect(Number(port), host)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    joined.proxy = new TcpProxy(server, `127.0.0.1:${(server.address() as { port: number }).port}`, delayMs);
    return joined.proxy;
  }

  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs.keys()) for (const socket of pair) socket.pause();
  }

  resume(): void {
    this.stalled = false;
    for (const [pair, links] of this.pairs) {
      for (const socket of pair) socket.resume();
      for (const link of links) link.flush();
    }
  }

  cut(): void {
    for (const pair of this.pairs.keys()) for (const socket of pair) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private join(client: Socket, upstream: Socket): void {
    const pair: [Socket, Socket] = [client, upstream];
    const isStalled = () => this.stalled;
    // Small writes go out at once: a delay is the proxy's to add, not Nagle's.
    for (const socket of pair) socket.setNoDelay(true);
    const links = [
      new ProxyLink(client, upstream, this.delayMs, isStalled),
      new ProxyLink(upstream, client, this.delayMs, isStalled),
    ];
    this.pairs.set(pair, links);
    const end = () => {
      this.pairs.delete(pair);
      for (const link of links) link.dispose();
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on('error', end).on('close', end);
    if (this.stalled) for (const socket of pair) socket.pause();
  }
}
