// The dashboard's server: a run hub, the library's runs handler for `/runs…`,
// and the page, which follows each run over Server-Sent Events with
// `followRun` and derives what it shows with the same operators a Node app
// uses.
//
//   npm run demo:web                         # http://127.0.0.1:8080/
//   npx tsx examples/web/server.ts --port 0 [--host 0.0.0.0] [--allow-host NAME]… [--max-runs N] [--workdir DIR]
//
// The page and the API pass the same `RequestGuard` (see the README's
// "Security"): Host must name this server, Origin (when sent) must be its
// own, a start is sent as application/json, and beyond loopback every
// request carries the token printed with the URL.
//
//   POST   /runs             {"prompt", "metadata": {"scenario"?, "speed"?}} → 201 {id}
//                             {"prompt", "resume": threadId, …}: a reply, a new message in a thread a run reported
//   GET    /runs             every run's RunStatus
//   GET    /runs/:id         its RunStatus
//   GET    /runs/:id/events  its events from the first (or after Last-Event-ID): SSE, or JSONL
//   DELETE /runs/:id         cancel: answers once its process is gone
//
// Scenarios replay recorded runs through the fake CLI; a prompt runs EvoSci
// when `$EVOSCI_BIN` is set or `EvoSci` is on the PATH (else the demo replay).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  RequestGuard,
  requestTarget,
  runHub,
  RunHubError,
  runsHandler,
  type RequestTarget,
  type RunHub,
  type RunsRequestHandler,
} from 'evosci-rx/runs';
import { bundleForBrowser } from './bundle.js';
import { DashboardHub, DashboardPolicy, type DashboardPolicyOptions } from './dashboardHub.js';

const pageFile = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));

export interface DashboardServerOptions extends DashboardPolicyOptions {
  /** Default 0: a free port. */
  readonly port?: number | undefined;
  /** Default 127.0.0.1. Beyond loopback, requests need the token. */
  readonly host?: string | undefined;
  /** Names the server answers to besides its own addresses and `localhost` (a reverse proxy's, a machine's). */
  readonly allowHosts?: readonly string[] | undefined;
  /** The token requests must carry; by default a random one when bound beyond loopback, none on it. */
  readonly token?: string | undefined;
  /** Runs whose process is alive at once (the hub's `maxLive`); one more start is 429. Default 4. */
  readonly maxRuns?: number | undefined;
  /** Finished runs kept for late readers, the oldest forgotten first. Default 20. */
  readonly keepFinished?: number | undefined;
  /** Bytes of JSONL kept for finished runs together. Default 64 MiB. */
  readonly keepBytes?: number | undefined;
}

export interface DashboardServer {
  /** Where it serves, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string;
  /** The page's link to open: `url`, with `?token=` when one is needed. */
  readonly pageUrl: string;
  /** The token requests must carry, if any. */
  readonly token: string | undefined;
  /** The hub its handler serves. */
  readonly hub: RunHub;
  /** Process ids by run id, while each run's process is alive: the hub's statuses do not carry them. */
  readonly processes: ReadonlyMap<string, number>;
  /** Stops every run still going, waits until their processes are gone, and stops serving. */
  close(): Promise<void>;
}

interface Asset {
  readonly body: string;
  readonly type: string;
}

/** The page and its bundle, built once at start: the same for every visitor. */
async function pageAssets(): Promise<Map<string, Asset>> {
  return new Map([
    ['/', { body: readFileSync(pageFile('index.html'), 'utf8'), type: 'text/html; charset=utf-8' }],
    ['/style.css', { body: readFileSync(pageFile('style.css'), 'utf8'), type: 'text/css; charset=utf-8' }],
    ['/app.js', { body: await bundleForBrowser(pageFile('main.ts')), type: 'text/javascript; charset=utf-8' }],
  ]);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** What a request for the page gets: its asset, once the guard the API also passes has let it in. */
function servePage(
  guard: RequestGuard,
  assets: Map<string, Asset>,
  target: RequestTarget,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const answer = (status: number, body: string, type: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  try {
    const cookie = guard.check(req, { searchParams: target.query });
    if (cookie) res.setHeader('set-cookie', cookie);
  } catch (err) {
    const [status, error] =
      err instanceof RunHubError ? [err.status, err.message] : [500, 'the server failed to answer'];
    return answer(status, JSON.stringify({ error }), 'application/json; charset=utf-8');
  }
  const asset = assets.get(target.path);
  if (asset && req.method === 'GET') return answer(200, asset.body, asset.type);
  answer(404, JSON.stringify({ error: `nothing at ${target.path.slice(0, 200)}` }), 'application/json; charset=utf-8');
}

/**
 * The API under `/runs`, the page everywhere else. A target that is neither
 * a path nor an http URL (`GET http://[`) goes to the API too, which answers
 * it 400: `new URL()` would throw on it, out of the server.
 */
function dashboardHandler(guard: RequestGuard, assets: Map<string, Asset>, api: RunsRequestHandler) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const target = requestTarget(req);
    if (target === undefined || target.path === '/runs' || target.path.startsWith('/runs/')) return api(req, res);
    servePage(guard, assets, target, req, res);
  };
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

export async function startDashboardServer(options: DashboardServerOptions = {}): Promise<DashboardServer> {
  const host = options.host ?? '127.0.0.1';
  // The guard takes requests without a token over loopback only: beyond it, the dashboard makes one, as Jupyter does.
  const token = options.token ?? (isLoopback(host) ? undefined : randomBytes(24).toString('hex'));
  const trust = { allowHosts: options.allowHosts, token };
  const guard = new RequestGuard(trust);
  const assets = await pageAssets();
  const policy = new DashboardPolicy(options);
  const hub = new DashboardHub(
    await runHub({
      maxLive: options.maxRuns,
      keepFinished: options.keepFinished ?? 20,
      keepBytes: options.keepBytes ?? 64 * 1024 * 1024,
      runOptions: (request, id) => policy.runOptions(request, id),
    }),
  );
  const server = createServer(dashboardHandler(guard, assets, runsHandler(hub, trust)));
  const { address, port } = await listen(server, options.port ?? 0, host).catch(async (err: unknown) => {
    await hub.close();
    throw err;
  });
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}/`;
  return {
    url,
    pageUrl: token === undefined ? url : `${url}?token=${token}`,
    token,
    hub,
    processes: policy.processes,
    close: async () => {
      await hub.close();
      // Event streams of ended runs have ended; idle keep-alive connections would hold `close` open.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      'allow-host': { type: 'string', multiple: true },
      'max-runs': { type: 'string' },
      workdir: { type: 'string' },
    },
  });
  const server = await startDashboardServer({
    port: Number(values.port),
    host: values.host,
    allowHosts: values['allow-host'],
    maxRuns: values['max-runs'] === undefined ? undefined : Number(values['max-runs']),
    workdir: values.workdir,
    onStderr: (id, line) => console.error(`[${id}] ${line}`),
  });
  console.log(`evosci-rx dashboard: ${server.pageUrl}  (Ctrl-C stops it and every run)`);
  process.once('SIGINT', () => {
    console.log('\nStopping the runs…');
    void server.close().then(() => process.exit(0));
  });
}
