import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server, to break one client's link:
 * `stall()` stops moving bytes both ways (the connection stays open and
 * every call waits), `resume()` moves them again, `cut()` closes every
 * connection (the client reconnects through the proxy).
 */
export class TcpProxy {
  private readonly pairs = new Set<[Socket, Socket]>();
  private stalled = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** A proxy on a free loopback port to `target` (`host:port`). */
  static async start(target: string): Promise<TcpProxy> {
    const [host = '127.0.0.1', port] = target.split(':');
    const joined: { proxy?: TcpProxy } = {};
    const server = createServer((client) => joined.proxy?.join(client, connect(Number(port), host)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    joined.proxy = new TcpProxy(server, `127.0.0.1:${(server.address() as { port: number }).port}`);
    return joined.proxy;
  }

  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) for (const socket of pair) socket.pause();
  }

  resume(): void {
    this.stalled = false;
    for (const pair of this.pairs) for (const socket of pair) socket.resume();
  }

  cut(): void {
    for (const pair of this.pairs) for (const socket of pair) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private join(client: Socket, upstream: Socket): void {
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on('error', end).on('close', end);
    this.forward(client, upstream);
    this.forward(upstream, client);
    if (this.stalled) for (const socket of pair) socket.pause();
  }

  /** Bytes from one side to the other; a chunk read as the link stalls waits, with its socket paused, for `resume`. */
  private forward(from: Socket, to: Socket): void {
    const held: Buffer[] = [];
    from.on('data', (chunk: Buffer) => {
      if (!this.stalled && held.length === 0) return void to.write(chunk);
      held.push(chunk);
      from.pause();
    });
    from.on('resume', () => {
      for (const chunk of held.splice(0)) to.write(chunk);
    });
    from.on('end', () => to.end());
  }
}
