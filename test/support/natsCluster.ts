// A JetStream cluster of nats-servers on loopback, as users run one for a
// fleet: three (or five) servers, each route between two of them through
// TCP proxies of the test's, so that a test can cut one link, or every link
// of one server (a partition), and heal it again.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { freePort, jetStreamAnswers, missingNatsServer, natsServerBinary } from './natsServer.js';
import { TcpProxy } from './tcpProxy.js';

/** One server of the cluster: its name, its client URL, and its process. */
export class ClusterNode {
  private child: ChildProcess | undefined;

  constructor(
    readonly name: string,
    readonly url: string,
    private readonly configFile: string,
    private readonly logFile: string,
  ) {}

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server; resolves once it has spawned (the cluster waits for JetStream to answer). */
  spawn(): void {
    const binary = natsServerBinary();
    if (binary === undefined) throw new Error(missingNatsServer());
    // Its log goes to a file, not a pipe: a test that holds its event loop must not block the server's writes.
    const log = openSync(this.logFile, 'a');
    this.child = spawn(binary, ['-c', this.configFile], { stdio: ['ignore', 'ignore', log] });
    closeSync(log);
  }

  /** Stops the server with `signal` (SIGKILL: a crash; SIGTERM: a graceful stop) and resolves once it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const running = this.child;
    this.child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(signal);
    });
  }

  /** The last lines of its log, for an error message. */
  logTail(lines = 5): string {
    try {
      return readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-lines).join(' | ');
    } catch {
      return '(no log)';
    }
  }
}

/** Options of `NatsCluster.start`. */
export interface NatsClusterOptions {
  /** Servers in the cluster. Default 3. */
  readonly size?: number;
  /** More of each server's configuration (users, `sync_interval`, ping settings), after what the cluster needs. */
  readonly config?: string;
}

/** The route proxies by the server that solicits through them and the one they lead to: `routes.get('0>2')`. */
type Routes = ReadonlyMap<string, TcpProxy>;

const routeKey = (from: number, to: number) => `${from}>${to}`;

/** Where servers say their routes are: port 1, where nothing listens, so that no route bypasses the proxies. */
const DEAD_ROUTE = '127.0.0.1:1';

/**
 * A cluster of nats-servers with JetStream, each on its own loopback ports
 * and store. Each server solicits a route to every other through a proxy of
 * its own (JetStream wants every server to have configured routes; of the
 * two routes of a pair, the servers keep one). A server tells the others of
 * a new peer, and they connect to the route address it advertises: that
 * would be a route around the proxies, which cutting them leaves up, so each
 * advertises a port where nothing listens (`DEAD_ROUTE`), and only the routes
 * through the proxies are made. `no_advertise` keeps clients to the servers
 * they were given.
 */
export class NatsCluster {
  private constructor(
    readonly nodes: readonly ClusterNode[],
    private readonly routes: Routes,
    private readonly store: string,
  ) {}

  /**
   * Starts the servers and waits until JetStream answers on each. A port taken
   * by another process between its choice and its use (tests run side by side)
   * fails a start: it is tried again on new ports, up to three times.
   */
  static async start(options: NatsClusterOptions = {}): Promise<NatsCluster> {
    for (let tries = 1; ; tries++) {
      const cluster = await NatsCluster.spawn(options);
      try {
        await cluster.ready(cluster.nodes);
        return cluster;
      } catch (err) {
        await cluster.dispose();
        if (tries >= 3) throw err;
      }
    }
  }

  private static async spawn(options: NatsClusterOptions): Promise<NatsCluster> {
    const size = options.size ?? 3;
    const store = mkdtempSync(join(tmpdir(), 'evosci-rx-cluster-'));
    const clientPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routes = new Map<string, TcpProxy>();
    for (let i = 0; i < size; i++)
      for (let j = 0; j < size; j++)
        if (i !== j) routes.set(routeKey(i, j), await TcpProxy.start(`127.0.0.1:${routePorts[j]}`));
    const clusterName = `evosci-rx-${process.pid}-${clientPorts[0]}`;
    const nodes = clientPorts.map((port, i) => {
      const solicited = [...routes].filter(([key]) => key.startsWith(`${i}>`)).map(([, proxy]) => proxy.url);
      const configFile = join(store, `n${i}.conf`);
      writeFileSync(configFile, nodeConfig(i, port, routePorts[i]!, clusterName, solicited, store, options.config));
      return new ClusterNode(`n${i}`, `127.0.0.1:${port}`, configFile, join(store, `n${i}.log`));
    });
    for (const node of nodes) node.spawn();
    return new NatsCluster(nodes, routes, store);
  }

  /** Every server's client URL: what a client given the whole cluster connects with. */
  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  /** The proxies of the routes between two servers, the one each solicits. */
  link(a: number, b: number): TcpProxy[] {
    const proxies = [this.routes.get(routeKey(a, b)), this.routes.get(routeKey(b, a))];
    if (proxies.some((p) => p === undefined)) throw new Error(`no route between n${a} and n${b}`);
    return proxies as TcpProxy[];
  }

  /** Cuts the link between two servers: its routes are closed, and new ones carry nothing until `rejoin`. */
  cut(a: number, b: number): void {
    for (const proxy of this.link(a, b)) {
      proxy.stall();
      proxy.cut();
    }
  }

  rejoin(a: number, b: number): void {
    for (const proxy of this.link(a, b)) proxy.resume();
  }

  /**
   * Cuts every route of server `i` (its clients stay connected to it): its
   * links are closed and new ones carry nothing, as a partition drops packets.
   */
  isolate(i: number): void {
    for (const j of this.others(i)) this.cut(i, j);
  }

  /** Lets server `i`'s routes carry bytes again. */
  heal(i: number): void {
    for (const j of this.others(i)) this.rejoin(i, j);
  }

  /** Starts a stopped server again, on its ports and store, and waits until JetStream answers on it. */
  async restart(i: number): Promise<void> {
    const node = this.nodes[i]!;
    node.spawn();
    await this.ready([node]);
  }

  /** The name of the server leading `stream`'s replicas, asked through `url`; `undefined` while none leads. */
  async leaderOf(stream: string, url = this.runningUrls()[0]!): Promise<string | undefined> {
    const nc = await connect({ servers: url, reconnect: false, timeout: 2000 });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      return (await jsm.streams.info(stream)).cluster?.leader ?? undefined;
    } catch {
      return undefined;
    } finally {
      await nc.close();
    }
  }

  /** The server each consumer of `stream` is on, asked through `url`: where JetStream placed them. */
  async consumerPlaces(stream: string, url: string): Promise<string[]> {
    const nc = await connect({ servers: url, reconnect: false, timeout: 2000 });
    try {
      const places: string[] = [];
      const jsm = await jetstreamManager(nc, { timeout: 5000 });
      for await (const info of jsm.consumers.list(stream)) places.push(info.cluster?.leader ?? '?');
      return places;
    } finally {
      await nc.close();
    }
  }

  /** The index of a server by its name (`n1` → 1). */
  indexOf(name: string): number {
    return this.nodes.findIndex((n) => n.name === name);
  }

  /**
   * A client of the whole cluster: it reconnects to another server when its
   * own goes away (the servers do not advertise each other: only to those
   * given). `options` adds to it (`noRandomize`: the first given first).
   */
  connect(servers: string | string[] = this.urls, options: ConnectionOptions = {}): Promise<NatsConnection> {
    return connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250, ...options });
  }

  async dispose(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop('SIGKILL')));
    await Promise.all([...this.routes.values()].map((p) => p.close()));
    rmSync(this.store, { recursive: true, force: true });
  }

  private runningUrls(): string[] {
    return this.nodes.filter((n) => n.running).map((n) => n.url);
  }

  private others(i: number): number[] {
    return this.nodes.flatMap((_, j) => (j === i ? [] : [j]));
  }

  /** Resolves once JetStream answers on each of `nodes` (a meta leader is elected), or fails with their logs. */
  private async ready(nodes: readonly ClusterNode[]): Promise<void> {
    try {
      await Promise.all(nodes.map((n) => jetStreamAnswers(n.url, { withinMs: 30_000 })));
    } catch (err) {
      const logs = nodes.map((n) => `${n.name}: ${n.logTail()}`).join('\n');
      throw new Error(`the cluster did not start: ${(err as Error).message}\n${logs}`);
    }
  }
}

/** One server's configuration: its name, ports and store, and the routes it solicits. */
function nodeConfig(
  i: number,
  port: number,
  routePort: number,
  clusterName: string,
  routes: readonly string[],
  store: string,
  extra: string | undefined,
): string {
  return [
    `server_name: n${i}`,
    `listen: "127.0.0.1:${port}"`,
    `jetstream { store_dir: "${join(store, `n${i}`)}" }`,
    'cluster {',
    `  name: "${clusterName}"`,
    `  listen: "127.0.0.1:${routePort}"`,
    '  no_advertise: true',
    `  advertise: "${DEAD_ROUTE}"`,
    `  routes: [${routes.map((url) => `"nats-route://${url}"`).join(', ')}]`,
    '}',
    extra ?? '',
    '',
  ].join('\n');
}
