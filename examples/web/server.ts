// The dashboard's server: starts runs and streams each run's JSONL over HTTP
// to the page, which decodes it with the same `fromJsonl` and operators that
// a Node app uses.
//
//   npm run demo:web                         # http://127.0.0.1:8080/
//   npx tsx examples/web/server.ts --port 0 [--host 0.0.0.0] [--workdir DIR]
//
//   POST   /runs             {"scenario": "demo" | "needs-input" | "slow", "speed"?: n} or {"prompt": "…"} → RunInfo
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
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isScenario, type StartRequest } from './api.js';
import { bundleForBrowser } from './bundle.js';
import { Runs, type RunsOptions } from './runs.js';

const pageFile = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));
/** A prompt fits in one argv element (131,072 bytes); anything bigger is not a start request. */
const MAX_BODY = 256 * 1024;

export interface DashboardServerOptions extends RunsOptions {
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
}

export interface DashboardServer {
  /** The page, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string;
  readonly runs: Runs;
  /** Cancels the runs still going, waits until their processes are gone, and stops serving. */
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

async function readStartRequest(req: IncomingMessage): Promise<StartRequest> {
  let body = '';
  for await (const chunk of req.setEncoding('utf8') as AsyncIterable<string>) {
    body += chunk;
    if (body.length > MAX_BODY) throw new HttpError(413, 'request body too large');
  }
  let value: unknown;
  try {
    value = body === '' ? {} : JSON.parse(body);
  } catch {
    throw new HttpError(400, 'body is not JSON');
  }
  if (typeof value !== 'object' || value === null) throw new HttpError(400, 'body is not a JSON object');
  const { scenario, prompt, speed } = value as Record<string, unknown>;
  if (scenario !== undefined && !isScenario(scenario))
    throw new HttpError(400, `unknown scenario ${JSON.stringify(scenario)}`);
  if (prompt !== undefined && typeof prompt !== 'string') throw new HttpError(400, 'prompt must be a string');
  if (speed !== undefined && !(typeof speed === 'number' && speed > 0 && speed <= 100))
    throw new HttpError(400, 'speed must be a number in (0, 100]');
  return { scenario, prompt, speed };
}

export async function startDashboardServer(options: DashboardServerOptions = {}): Promise<DashboardServer> {
  // Built once at start: the page is the same for every visitor.
  const assets = new Map<string, { body: string; type: string }>([
    ['/', { body: readFileSync(pageFile('index.html'), 'utf8'), type: 'text/html; charset=utf-8' }],
    ['/style.css', { body: readFileSync(pageFile('style.css'), 'utf8'), type: 'text/css; charset=utf-8' }],
    ['/app.js', { body: await bundleForBrowser(pageFile('main.ts')), type: 'text/javascript; charset=utf-8' }],
  ]);
  const runs = new Runs(options);

  const streamEvents = (res: ServerResponse, id: string) => {
    const live = runs.get(id);
    if (!live) throw new HttpError(404, `no run ${id}`);
    res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' });
    // Headers now, so that the page's fetch resolves before the first event.
    res.flushHeaders();
    const reading = live.lines.subscribe({ next: (line) => res.write(line), complete: () => res.end() });
    // A reader that goes away stops reading; the run goes on for the others.
    res.on('close', () => reading.unsubscribe());
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const asset = assets.get(pathname);
    if (asset && method === 'GET') return send(res, 200, asset.body, asset.type);
    if (pathname === '/runs') {
      if (method === 'GET') return sendJson(res, 200, runs.list());
      if (method === 'POST') return sendJson(res, 201, runs.start(await readStartRequest(req)).info());
      throw new HttpError(405, `${method} not allowed`);
    }
    const match = /^\/runs\/([\w-]+)(\/events)?$/.exec(pathname);
    if (!match) throw new HttpError(404, `nothing at ${pathname}`);
    const [, id = '', events] = match;
    if (events) {
      if (method !== 'GET') throw new HttpError(405, `${method} not allowed`);
      return streamEvents(res, id);
    }
    const live = runs.get(id);
    if (!live) throw new HttpError(404, `no run ${id}`);
    if (method === 'GET') return sendJson(res, 200, live.info());
    if (method === 'DELETE') return sendJson(res, 200, await live.cancel());
    throw new HttpError(405, `${method} not allowed`);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : err instanceof TypeError ? 400 : 500;
      if (res.headersSent) res.destroy();
      else sendJson(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/`,
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
      workdir: { type: 'string' },
    },
  });
  const server = await startDashboardServer({
    port: Number(values.port),
    host: values.host,
    workdir: values.workdir,
    onStderr: (id, line) => console.error(`[${id}] ${line}`),
  });
  console.log(`evosci-rx dashboard: ${server.url}  (Ctrl-C stops it and every run)`);
  process.once('SIGINT', () => {
    console.log('\nStopping the runs…');
    void server.close().then(() => process.exit(0));
  });
}
