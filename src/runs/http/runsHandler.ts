// The runs handler: a run hub's routes over HTTP, for `node:http`, Express,
// Fastify and NestJS. Every request is answered, however it is written.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RunHubError, UnknownRunError } from '../errors.js';
import type { RunHub } from '../RunHub.js';
import { hasEnded } from '../runEnd.js';
import { RUN_ID } from '../runId.js';
import { readJsonBody, sendJson } from './body.js';
import { answerFailure, MethodNotAllowed, reporter } from './failures.js';
import { RequestGuard, type GuardOptions } from './RequestGuard.js';
import { requestTarget, type RequestTarget } from './requestTarget.js';
import { RunEventsRoute } from './RunEventsRoute.js';

/** Options of `runsHandler`. */
export interface RunsHandlerOptions extends GuardOptions {
  /** Where the routes are, as the handler sees `req.url` (Express strips its mount path). Default `/runs`. */
  readonly basePath?: string | undefined;
  /** A start request's body, at most. Default 256 KiB (a prompt is at most 128 KiB). */
  readonly maxBodyBytes?: number | undefined;
  /** Milliseconds of silence before an SSE comment keeps a connection open. Default 15000. */
  readonly heartbeatMs?: number | undefined;
  /**
   * Told each error the handler could not answer with a status of its own,
   * with the request it came in: a failure of the hub or of the handler
   * (answered 500, which says nothing more), and an error that cut a run's
   * event stream short after its headers were sent (the hub's `follow`
   * failed: a store's I/O error, `RunRestartedError`…). Not told: refusals
   * (a `RunHubError`, answered with its status), requests it cannot read
   * (400), a run that ended otherwise than completed. Default: a process
   * warning, as `runHub`'s `onStoreError`, so that a failure is seen
   * somewhere. A hook that throws is itself reported as a warning.
   */
  readonly onError?: ((error: unknown, req: IncomingMessage) => void) | undefined;
}

/** A Node request handler; `next` (Express, Connect) is called for a path outside the routes. */
export type RunsRequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** A request the guard let in, its route found. */
interface Route {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly target: RequestTarget;
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
 * DELETE /runs/:id          cancels it, idempotent → 200 and its status once ended; 202 while its cancel is pending
 * ```
 *
 * Reading never starts anything: only a `POST` starts a run. Every request
 * passes the guard first (Host, Origin, token: see `GuardOptions`). No
 * request, however malformed, throws out of it: each is answered (400 for
 * what it cannot read), and the app hears of failures through `onError`.
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
  const report = reporter(options.onError);
  const events = new RunEventsRoute(hub, options.heartbeatMs, report);
  const routes = new RunsRoutes(hub, guard, options.maxBodyBytes ?? 256 * 1024, events);
  return (req, res, next) => {
    const target = requestTarget(req);
    const ours = target !== undefined && (target.path === base || target.path.startsWith(`${base}/`));
    if (!ours && next) return next();
    try {
      if (target === undefined) return sendJson(res, 400, { error: 'the request target is not a path or an http URL' });
      if (!ours) return sendJson(res, 404, { error: `nothing at ${target.path.slice(0, 200)}` });
      res.on('error', (err) => report(err, req));
      routes.serve(req, res, target, target.path.slice(base.length)).catch((err: unknown) => {
        answerFailure(req, res, err, report);
      });
    } catch (err) {
      answerFailure(req, res, err, report);
    }
  };
}

/** The routes under the base path. */
class RunsRoutes {
  constructor(
    private readonly hub: RunHub,
    private readonly guard: RequestGuard,
    private readonly maxBodyBytes: number,
    private readonly events: RunEventsRoute,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse, target: RequestTarget, rest: string): Promise<void> {
    const cookie = this.guard.check(req, { searchParams: target.query });
    if (cookie) res.setHeader('set-cookie', cookie);
    const match = /^(?:\/([^/]+)(\/events)?)?\/?$/.exec(rest);
    if (!match) throw new RunHubError(`nothing at ${target.path.slice(0, 200)}`, 404);
    const [, id, events] = match;
    if (id !== undefined && !RUN_ID.test(id)) throw new UnknownRunError(id);
    return this.route({ req, res, target, id, events: events !== undefined });
  }

  private async route(route: Route): Promise<void> {
    const { req, res, id, events } = route;
    const method = req.method ?? 'GET';
    const reading = method === 'GET' || method === 'HEAD';
    if (id === undefined) {
      if (reading) return sendJson(res, 200, await this.hub.list());
      if (method === 'POST') return this.start(route);
      throw new MethodNotAllowed(method, ['GET', 'HEAD', 'POST']);
    }
    if (events) {
      if (reading) return this.events.serve(req, res, id, route.target.query);
      throw new MethodNotAllowed(method, ['GET', 'HEAD']);
    }
    if (reading) return sendJson(res, 200, await this.hub.status(id));
    if (method === 'DELETE') return this.cancel(res, id);
    throw new MethodNotAllowed(method, ['GET', 'HEAD', 'DELETE']);
  }

  private async start({ req, res, target }: Route): Promise<void> {
    const body = await readJsonBody(req, this.maxBodyBytes);
    const header = req.headers['idempotency-key'];
    // The draft's key is a structured-field string, `"…"`; a bare one is taken too.
    const idempotencyKey = typeof header === 'string' ? header.replace(/^"(.*)"$/, '$1') : undefined;
    const { id, created } = await this.hub.start(body as never, { idempotencyKey });
    const location = `${target.path.replace(/\/$/, '')}/${id}`;
    sendJson(res, created ? 201 : 200, { id }, { location });
  }

  /** 200 with the status of a run that has ended; 202 with it while the hub's cancel is stored but not yet done. */
  private async cancel(res: ServerResponse, id: string): Promise<void> {
    const status = await this.hub.cancel(id);
    sendJson(res, hasEnded(status) ? 200 : 202, status);
  }
}
