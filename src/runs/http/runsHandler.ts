import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FlowControl } from '../../common/FlowControl.js';
import { RunHubError, UnknownRunError } from '../errors.js';
import { afterOf } from '../lastEventId.js';
import type { RunHub } from '../RunHub.js';
import { RUN_ID } from '../runId.js';
import { readJsonBody, sendJson } from './body.js';
import { RequestGuard, type GuardOptions } from './RequestGuard.js';
import { runJsonlStream, runSseStream } from './runStreams.js';

/** Options of `runsHandler`. */
export interface RunsHandlerOptions extends GuardOptions {
  /** Where the routes are, as the handler sees `req.url` (Express strips its mount path). Default `/runs`. */
  readonly basePath?: string | undefined;
  /** A start request's body, at most. Default 256 KiB (a prompt is at most 128 KiB). */
  readonly maxBodyBytes?: number | undefined;
  /** Milliseconds of silence before an SSE comment keeps a connection open. Default 15000. */
  readonly heartbeatMs?: number | undefined;
}

/** A Node request handler; `next` (Express, Connect) is called for a path outside the routes. */
export type RunsRequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** A request the guard let in, its route found. */
interface Route {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly id: string | undefined;
  readonly events: boolean;
}

/**
 * A run hub over HTTP, for `node:http`, Express, Fastify and NestJS:
 *
 * ```
 * POST   /runs              {"prompt": …} (Idempotency-Key honoured) → 201 {id}; 200 {id} on a repeated key
 * GET    /runs              every run's status
 * GET    /runs/:id          its status
 * GET    /runs/:id/events   SSE (Accept: text/event-stream; Last-Event-ID or ?after=N; `end` says how it ended) or JSONL
 * DELETE /runs/:id          cancels it, idempotent → its status
 * ```
 *
 * Reading never starts anything: only a `POST` starts a run. Every request
 * passes the guard first (Host, Origin, token: see `GuardOptions`).
 *
 * ```ts
 * const hub = await runHub({ dir: './runs', runOptions: { workdir: './task' } });
 * createServer(runsHandler(hub)).listen(8080, '127.0.0.1');
 * app.use('/api', runsHandler(hub)); // Express: /api/runs…
 * ```
 */
export function runsHandler(hub: RunHub, options: RunsHandlerOptions = {}): RunsRequestHandler {
  const guard = new RequestGuard(options);
  const base = (options.basePath ?? '/runs').replace(/\/$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  const routes = new RunsRoutes(hub, maxBodyBytes, options.heartbeatMs);
  return (req, res, next) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path !== base && !path.startsWith(`${base}/`)) {
      if (next) return next();
      return sendJson(res, 404, { error: `nothing at ${path.slice(0, 200)}` });
    }
    routes.serve(guard, req, res, url, path.slice(base.length)).catch((err: unknown) => fail(res, err));
  };
}

/** The answer to a request that failed: its status and message, or 500 saying nothing of the server's insides. */
function fail(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.destroy();
  if (err instanceof RunHubError) {
    const allow = err instanceof MethodNotAllowed ? { allow: err.allowed.join(', ') } : undefined;
    return sendJson(res, err.status, { error: err.message }, allow);
  }
  sendJson(res, 500, { error: 'the server failed to answer' });
}

/** A method the route does not answer: 405, with the methods it does for the `Allow` header. */
class MethodNotAllowed extends RunHubError {
  constructor(
    method: string,
    readonly allowed: readonly string[],
  ) {
    super(`${method} is not allowed here: ${allowed.join(', ')}`, 405);
  }
}

/** The routes under the base path. */
class RunsRoutes {
  constructor(
    private readonly hub: RunHub,
    private readonly maxBodyBytes: number,
    private readonly heartbeatMs: number | undefined,
  ) {}

  async serve(guard: RequestGuard, req: IncomingMessage, res: ServerResponse, url: URL, rest: string) {
    const cookie = guard.check(req, url);
    if (cookie) res.setHeader('set-cookie', cookie);
    const match = /^(?:\/([^/]+)(\/events)?)?\/?$/.exec(rest);
    if (!match) throw new RunHubError(`nothing at ${url.pathname.slice(0, 200)}`, 404);
    const [, id, events] = match;
    if (id !== undefined && !RUN_ID.test(id)) throw new UnknownRunError(id);
    return this.route({ req, res, url, id, events: events !== undefined });
  }

  private async route(route: Route): Promise<void> {
    const { req, res, id, events } = route;
    const method = req.method ?? 'GET';
    if (id === undefined) {
      if (method === 'GET') return sendJson(res, 200, await this.hub.list());
      if (method === 'POST') return this.start(route);
      throw new MethodNotAllowed(method, ['GET', 'POST']);
    }
    if (events) {
      if (method === 'GET') return this.stream(route, id);
      throw new MethodNotAllowed(method, ['GET']);
    }
    if (method === 'GET') return sendJson(res, 200, await this.hub.status(id));
    if (method === 'DELETE') return sendJson(res, 200, await this.hub.cancel(id));
    throw new MethodNotAllowed(method, ['GET', 'DELETE']);
  }

  private async start({ req, res, url }: Route): Promise<void> {
    const body = await readJsonBody(req, this.maxBodyBytes);
    const header = req.headers['idempotency-key'];
    // The draft's key is a structured-field string, `"…"`; a bare one is taken too.
    const idempotencyKey = typeof header === 'string' ? header.replace(/^"(.*)"$/, '$1') : undefined;
    const { id, created } = await this.hub.start(body as never, { idempotencyKey });
    const location = `${url.pathname.replace(/\/$/, '')}/${id}`;
    sendJson(res, created ? 201 : 200, { id }, { location });
  }

  /** The run's events from where the reader is, once the hub has said it holds the run. */
  private async stream({ req, res, url }: Route, id: string): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    const query = url.searchParams.get('after');
    const after = afterOf(typeof lastEventId === 'string' ? lastEventId : (query ?? undefined));
    await this.hub.status(id);
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    const source = (flow: FlowControl) => this.hub.follow(id, { after, flow });
    const body = sse ? runSseStream(source, { heartbeatMs: this.heartbeatMs }) : runJsonlStream(source);
    res.writeHead(200, {
      'content-type': sse ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const readable = Readable.fromWeb(body);
    readable.pipe(res);
    // A reader that goes away cancels its stream: its place in the run is let go; the run goes on.
    res.on('close', () => readable.destroy());
  }
}
