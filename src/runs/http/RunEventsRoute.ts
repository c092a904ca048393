// `GET /runs/:id/events`: a run's events from where the reader is, as
// Server-Sent Events or JSONL, and the 204 that stops an `EventSource`
// which has seen the run's end.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FlowControl } from '../../common/FlowControl.js';
import { EvoSciError } from '../../events/errors.js';
import { afterOf, hasSeenEnd } from '../lastEventId.js';
import type { RunHub } from '../RunHub.js';
import { hasEnded } from '../runEnd.js';
import type { RunsErrorHook } from './failures.js';
import { jsonlFraming, sseFraming, type RunSource } from './runStreams.js';
import { cutOff, sendFrames } from './sendStream.js';

/** The events route of a runs handler. */
export class RunEventsRoute {
  constructor(
    private readonly hub: RunHub,
    private readonly heartbeatMs: number | undefined,
    private readonly report: RunsErrorHook,
  ) {}

  /**
   * Answers once the hub has said it holds the run: 204 to an SSE reader
   * that has every event of a run that ended (it saw the `end`, whose id is
   * the event count, and reconnected), else the events after its place.
   */
  async serve(req: IncomingMessage, res: ServerResponse, id: string, query: URLSearchParams): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    const after = afterOf(typeof lastEventId === 'string' ? lastEventId : (query.get('after') ?? undefined));
    const status = await this.hub.status(id);
    // A reader that went away while the hub looked the run up is not followed: nothing would end its follow.
    if (res.destroyed) return;
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    if (sse && hasSeenEnd(status, after)) {
      res.writeHead(204, { 'cache-control': 'no-store' });
      return void res.end();
    }
    const headers = {
      'content-type': sse ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    };
    if (req.method === 'HEAD') return void res.writeHead(200, headers).end();
    const source: RunSource = (flow: FlowControl) => this.hub.follow(id, { after, flow });
    const onFailure = (error: unknown) => this.report(error, req);
    const endedWith = hasEnded(status) ? status.events : undefined;
    const { source: framedOf, framing } = sse
      ? sseFraming(source, { heartbeatMs: this.heartbeatMs, after, endedWith, onFailure })
      : jsonlFraming(source);
    // Before the headers: a hub whose follow throws as it is called is answered 500.
    const flow = new FlowControl();
    const framed$ = framedOf(flow);
    res.writeHead(200, headers);
    res.flushHeaders();
    // Straight to the response: a reader's frames leave in a few large writes, not one per event.
    const failure = await sendFrames(res, framed$, framing, flow);
    if (failure === undefined) return;
    // A JSONL body of a run that did not complete is cut off: that is how its reader tells.
    if (sse || !EvoSciError.is(failure.error)) onFailure(failure.error);
    cutOff(res);
  }
}
