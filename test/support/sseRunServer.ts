// A run hub's event stream as a real `node:http` server plays it from a
// script: the SSE wire format of `GET /runs/:id/events`, `Last-Event-ID`
// honoured, refusals, and connections cut mid-run. For the tests of clients
// of that stream (`followRun`, in Node and in a browser).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunEnd, RunErrorInfo } from '../../src/runs/wire.js';

/** What one request gets. */
export type Answer =
  /** A plain answer: `body` (default `{"error":"HTTP <status>"}`) as `contentType` (default JSON). */
  | { readonly status: number; readonly body?: string; readonly contentType?: string }
  /**
   * The stream: the events after `Last-Event-ID` (or from `startAt`, whatever
   * the client asked), then the script's ending; with `cutAfter`, the socket is
   * destroyed once that many events are written and flushed, and `cutWhen`
   * has settled (a client may drop what it had not read when its connection
   * fails, as Chromium does: a test that counts on the client having them
   * waits for its sign that it has).
   */
  | {
      readonly cutAfter?: number;
      readonly cutWhen?: Promise<unknown>;
      readonly startAt?: number;
      /** Writes that many events, then nothing more, not even a heartbeat, the connection left open: a half-open link. */
      readonly silentAfter?: number;
      /** This answer's events and ending instead of the script's: another attempt of the run, say. */
      readonly events?: readonly string[];
      readonly ending?: SseRunScript['ending'];
    }
  /** No answer at all, not even its headers, the connection left open. */
  | 'unanswered';

export interface SseRunScript {
  /** The `data` of each event, in order: the event's JSON as a hub writes it, or anything, to test bad data. */
  readonly events: readonly string[];
  /**
   * After the last event: an `end` event (default `{ state: 'completed' }`), an `error` event, or the response
   * left open; `id` is the `id:` field the last event carries, if any (a hub may give it the run's event count).
   */
  readonly ending?:
    { readonly end: RunEnd; readonly id?: string } | { readonly error: RunErrorInfo; readonly id?: string } | 'open';
  /** The answers to the first requests, in order of arrival; every later request gets the stream. */
  readonly answers?: readonly Answer[];
  /** A `retry:` field sent at the start of each stream. */
  readonly retryMs?: number;
  /** The run's id: the server answers 404 for any other path. Default `run-1`. */
  readonly runId?: string;
}

/** A request the server has seen. */
export interface SeenRequest {
  readonly lastEventId: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** Settles when the connection closed before the response ended: the client aborted, or the script cut it. */
  readonly aborted: Promise<void>;
}

export interface SseRunServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The run's event stream: `<origin>/runs/<runId>/events`. */
  readonly url: string;
  /** The requests for the run's stream, in order of arrival. */
  readonly requests: readonly SeenRequest[];
  /** The `n`-th request (from 0), once it has come. */
  request(n: number): Promise<SeenRequest>;
  /** Stops listening and destroys every open connection. */
  close(): Promise<void>;
}

const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-store' };

/** Starts a server on a free loopback port that plays `script`. */
export async function sseRunServer(script: SseRunScript): Promise<SseRunServer> {
  const runPath = `/runs/${script.runId ?? 'run-1'}/events`;
  const requests: SeenRequest[] = [];
  const waiting = new Map<number, () => void>();
  const server = createServer((req, res) => {
    if (req.url !== runPath) return answer(res, { status: 404, body: JSON.stringify({ error: `no ${req.url}` }) });
    const header = req.headers['last-event-id'];
    const aborted = new Promise<void>((resolve) =>
      res.on('close', () => {
        if (!res.writableFinished) resolve();
      }),
    );
    const seen = requests.push({ lastEventId: header as string | undefined, headers: req.headers, aborted }) - 1;
    waiting.get(seen)?.();
    const planned = script.answers?.[seen] ?? {};
    if (planned === 'unanswered') return;
    if ('status' in planned) return answer(res, planned);
    const from = planned.startAt ?? (header === undefined ? 0 : Number(header) + 1);
    stream(res, script, from, planned);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}${runPath}`,
    requests,
    request: (n) =>
      n < requests.length
        ? Promise.resolve(requests[n]!)
        : new Promise((resolve) => waiting.set(n, () => resolve(requests[n]!))),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(res: ServerResponse, { status, body, contentType }: Extract<Answer, { status: number }>): void {
  res.writeHead(status, { 'content-type': contentType ?? 'application/json' });
  res.end(body ?? JSON.stringify({ error: `HTTP ${status}` }));
}

/** Writes the events from `from` on, then the ending; or cuts the connection as `plan` says. */
function stream(res: ServerResponse, script: SseRunScript, from: number, plan: Extract<Answer, { cutAfter?: number }>) {
  const { cutAfter, cutWhen, silentAfter, events = script.events } = plan;
  res.writeHead(200, STREAM_HEADERS);
  const frames = [script.retryMs === undefined ? '' : `retry: ${script.retryMs}\n\n`, ': heartbeat\n\n'];
  const upTo = cutAfter ?? silentAfter;
  const last = upTo === undefined ? events.length : Math.min(from + upTo, events.length);
  for (let index = from; index < last; index++) frames.push(`id: ${index}\ndata: ${events[index]}\n\n`);
  if (silentAfter !== undefined) return void res.write(frames.join(''));
  if (cutAfter !== undefined) {
    // One write, whose callback runs once it is handed to the socket: the client gets every byte, then the cut.
    const flushed = new Promise((resolve) => res.write(frames.join(''), resolve));
    return void Promise.all([flushed, cutWhen]).then(() => res.destroy());
  }
  res.write(frames.join(''));
  const ending = plan.ending ?? script.ending ?? { end: { state: 'completed' } };
  if (ending === 'open') return;
  const id = ending.id === undefined ? '' : `id: ${ending.id}\n`;
  if ('end' in ending) res.end(`event: end\n${id}data: ${JSON.stringify(ending.end)}\n\n`);
  else res.end(`event: error\n${id}data: ${JSON.stringify(ending.error)}\n\n`);
}

/**
 * Signs of a client's progress, for a script to wait on: `report(i)` when it
 * has had index `i`, `reached(i)` settles then (whichever comes first).
 */
export function progressSigns(): { report(index: number): void; reached(index: number): Promise<void> } {
  const signs = new Map<number, { promise: Promise<void>; resolve: () => void }>();
  const sign = (index: number) => {
    let entry = signs.get(index);
    if (entry === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => (resolve = settle));
      entry = { promise, resolve };
      signs.set(index, entry);
    }
    return entry;
  };
  return { report: (index) => sign(index).resolve(), reached: (index) => sign(index).promise };
}
