import { connect, createServer, type Server, type Socket } from 'node:net';
import { ProxyLink } from './proxyLink.js';

/** Options of a `TcpProxy`. */
export interface TcpProxyOptions {
  /** Milliseconds each chunk is held, in each direction: half the round-trip time the proxy adds. Default 0. */
  readonly delayMs?: number;
}

/** Which way a stalled link holds bytes: both ways, or only what the client sends (a one-way partition). */
export type StallDirection = 'both' | 'toServer';

/**
 * A loopback TCP proxy in front of a server, to break or slow one client's
 * link: `stall()` stops moving bytes both ways (the connection stays open and
 * every call waits), `stall('toServer')` only what the client sends (it still
 * receives), `resume()` moves them again, `cut()` closes every
 * connection (the client reconnects through the proxy), `refuse()` closes
 * them and turns every new one away until `resume()`; `delayMs` holds every
 * chunk that long each way, in order.
 */
export class TcpProxy {
  private readonly pairs = new Map<[Socket, Socket], ProxyLink[]>();
  private stalled: StallDirection | undefined;
  private refusing = false;
  /** How many connections `refuse()` turned away. */
  refused = 0;

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
    const server = createServer((client) => {
      const proxy = joined.proxy;
      if (proxy?.refusing) return void proxy.turnAway(client);
      proxy?.join(client, connect(Number(port), host));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    joined.proxy = new TcpProxy(server, `127.0.0.1:${(server.address() as { port: number }).port}`, delayMs);
    return joined.proxy;
  }

  stall(direction: StallDirection = 'both'): void {
    this.stalled = direction;
    for (const pair of this.pairs.keys()) this.pauseStalled(pair);
  }

  /** Closes every connection and resets each new one as it comes, until `resume()`: a server that is down. */
  refuse(): void {
    this.refusing = true;
    this.cut();
  }

  resume(): void {
    this.refusing = false;
    this.stalled = undefined;
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

  private turnAway(client: Socket): void {
    this.refused++;
    client.on('error', () => undefined).resetAndDestroy();
  }

  private join(client: Socket, upstream: Socket): void {
    const pair: [Socket, Socket] = [client, upstream];
    const toServerStalled = () => this.stalled !== undefined;
    const toClientStalled = () => this.stalled === 'both';
    // Small writes go out at once: a delay is the proxy's to add, not Nagle's.
    for (const socket of pair) socket.setNoDelay(true);
    const links = [
      new ProxyLink(client, upstream, this.delayMs, toServerStalled),
      new ProxyLink(upstream, client, this.delayMs, toClientStalled),
    ];
    this.pairs.set(pair, links);
    const end = () => {
      this.pairs.delete(pair);
      for (const link of links) link.dispose();
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on('error', end).on('close', end);
    this.pauseStalled(pair);
  }

  /** Stops reading the sides whose bytes a stall holds: the client's, and the server's too unless one-way. */
  private pauseStalled([client, upstream]: [Socket, Socket]): void {
    if (this.stalled !== undefined) client.pause();
    if (this.stalled === 'both') upstream.pause();
  }
}
