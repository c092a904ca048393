// The dashboard's server: starts runs and streams each run's JSONL over HTTP
// to the page, which decodes it with the same `fromJsonl` and operators that
// a Node app uses.
//
//   npm run demo:web                         # http://127.0.0.1:8080/
//   npx tsx examples/web/server.ts --port 0 [--host 0.0.0.0] [--allow-host NAME]… [--max-runs N] [--workdir DIR]
//
// Only the dashboard's own page may use it (see guard.ts and the README's
// "Security"): Host must name this server, Origin (when sent) must be its
// own, a start is sent as application/json, and beyond loopback every
// request carries the token printed with the URL.
//
//   POST   /runs             {"scenario": "demo" | "needs-input" | "slow", "speed"?: n} or {"prompt": "…"} → RunInfo
//                             {"resume": threadId, "prompt": "…"}: a reply, a new message in a thread a run reported
//   GET    /runs             every run's RunInfo
//   GET    /runs/:id         RunInfo (state, pid, exit, error)
//   GET    /runs/:id/events  the run's JSONL from its first event, as it comes (application/x-ndjson)
//   DELETE /runs/:id         cancel: the run is unsubscribed, which stops its process; answers once it is gone
//
// Scenarios replay recorded runs through the fake CLI; a prompt runs EvoSci
// when `$EVOSCI_BIN` is set or `EvoSci` is on the PATH (else the demo replay).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { toJsonlStream } from 'evosci-rx';
import { isScenario, THREAD_ID, type StartRequest } from './api.js';
import { bundleForBrowser } from './bundle.js';
import { RequestGuard } from './guard.js';
import { HttpError, readJsonObject, send, sendJson } from './http.js';
import { Runs, TooManyRunsError, UnknownThreadError, type LiveRun, type RunsOptions } from './runs.js';

const pageFile = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));
/** A prompt fits in one argv element (131,072 bytes); anything bigger is not a start request. */
const MAX_BODY = 256 * 1024;

export interface DashboardServerOptions extends RunsOptions {
  /** Default 0: a free port. */
  readonly port?: number | undefined;
  /** Default 127.0.0.1. Beyond loopback, requests need the token. */
  readonly host?: string | undefined;
  /** Names the server answers to besides its address and `localhost` (a reverse proxy's, a machine's). */
  readonly allowHosts?: readonly string[] | undefined;
  /** The token requests must carry; by default a random one when bound beyond loopback, none on it. */
  readonly token?: string | undefined;
}

export interface DashboardServer {
  /** Where it serves, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string;
  /** The page's link to open: `url`, with `?token=` when one is needed. */
  readonly pageUrl: string;
  /** The token requests must carry, if any. */
  readonly token: string | undefined;
  readonly runs: Runs;
  /** Cancels the runs still going, waits until their processes are gone, and stops serving. */
  close(): Promise<void>;
}

async function readStartRequest(req: IncomingMessage): Promise<StartRequest> {
  const { scenario, prompt, speed, resume } = await readJsonObject(req, MAX_BODY);
  if (scenario !== undefined && !isScenario(scenario))
    throw new HttpError(400, `unknown scenario ${JSON.stringify(scenario)}`);
  if (prompt !== undefined && typeof prompt !== 'string') throw new HttpError(400, 'prompt must be a string');
  if (speed !== undefined && !(typeof speed === 'number' && speed > 0 && speed <= 100))
    throw new HttpError(400, 'speed must be a number in (0, 100]');
  if (resume !== undefined && !(typeof resume === 'string' && THREAD_ID.test(resume)))
    throw new HttpError(400, 'resume must be a thread id that a run of this dashboard reported');
  if (resume !== undefined && (scenario !== undefined || !prompt?.trim()))
    throw new HttpError(400, 'a reply (resume) takes a prompt, and the CLI of the run it follows');
  return { scenario, prompt, speed, resume };
}

function streamEvents(res: ServerResponse, live: LiveRun): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' });
  // Headers now, so that the page's fetch resolves before the first event.
  res.flushHeaders();
  // Each reader reads the run's log from the first event, a late one too; one that falls behind pauses its place in it.
  const body = Readable.fromWeb(toJsonlStream((flow) => live.log.read(flow)));
  body.pipe(res);
  // A reader that goes away cancels its stream; the run goes on for the others.
  res.on('close', () => body.destroy());
}

/** The page and its bundle, built once at start: the same for every visitor. */
async function pageAssets(): Promise<Map<string, { body: string; type: string }>> {
  return new Map([
    ['/', { body: readFileSync(pageFile('index.html'), 'utf8'), type: 'text/html; charset=utf-8' }],
    ['/style.css', { body: readFileSync(pageFile('style.css'), 'utf8'), type: 'text/css; charset=utf-8' }],
    ['/app.js', { body: await bundleForBrowser(pageFile('main.ts')), type: 'text/javascript; charset=utf-8' }],
  ]);
}

/** The API of `/runs`, after the guard has let the request in. */
async function routeRuns(runs: Runs, req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
  const method = req.method ?? 'GET';
  if (pathname === '/runs') {
    if (method === 'GET') return sendJson(res, 200, runs.list());
    if (method !== 'POST') throw new HttpError(405, `${method} not allowed`);
    const request = await readStartRequest(req);
    try {
      return sendJson(res, 201, runs.start(request).info());
    } catch (err) {
      if (err instanceof TooManyRunsError) throw new HttpError(429, err.message);
      if (err instanceof UnknownThreadError) throw new HttpError(404, err.message);
      throw err;
    }
  }
  const match = /^\/runs\/([\w-]+)(\/events)?$/.exec(pathname);
  if (!match) throw new HttpError(404, `nothing at ${pathname}`);
  const [, id = '', events] = match;
  const live = runs.get(id);
  if (!live) throw new HttpError(404, `no run ${id}`);
  if (events && method === 'GET') return streamEvents(res, live);
  if (!events && method === 'GET') return sendJson(res, 200, live.info());
  if (!events && method === 'DELETE') return sendJson(res, 200, await live.cancel());
  throw new HttpError(405, `${method} not allowed`);
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

export async function startDashboardServer(options: DashboardServerOptions = {}): Promise<DashboardServer> {
  const assets = await pageAssets();
  const runs = new Runs(options);
  let guard: RequestGuard | undefined;

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!guard) throw new HttpError(503, 'starting');
    const cookie = guard.check(req, url);
    if (cookie) res.setHeader('set-cookie', cookie);
    const asset = assets.get(url.pathname);
    if (asset && req.method === 'GET') return send(res, 200, asset.body, asset.type);
    return routeRuns(runs, req, res, url.pathname);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : err instanceof TypeError ? 400 : 500;
      if (res.headersSent) res.destroy();
      else sendJson(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });
  const { address, port } = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  try {
    guard = new RequestGuard({ address, port, allowHosts: options.allowHosts, token: options.token });
  } catch (err) {
    server.close();
    throw err;
  }
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}/`;
  return {
    url,
    pageUrl: guard.token === undefined ? url : `${url}?token=${guard.token}`,
    token: guard.token,
    runs,
    close: async () => {
      await runs.close();
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
