import { context as contexts, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import type { Observable } from 'rxjs';
import type { EvoEvent } from '../src/events/codecs.js';
// Not the jetstream entry: its declarations name the NATS client's types, which an app tracing runs may not have.
import type { PipeRun, RequestHeaders } from '../src/jetstream/wire/pipeRun.js';
import { traceRun, type TraceRunOptions } from './traceRun.js';

/**
 * The trace context of `context` (default: the active one) as request
 * headers (`traceparent`, `tracestate`), through the propagator the app
 * registered with its SDK, for `submitRun(nc, request, { headers })`.
 *
 * ```ts
 * await tracer.startActiveSpan('submit', async (span) => {
 *   await submitRun(nc, { prompt }, { headers: traceHeaders() });
 *   span.end();
 * });
 * ```
 */
export function traceHeaders(context: Context = contexts.active()): RequestHeaders {
  const headers: Record<string, string> = {};
  propagation.inject(context, headers);
  return headers;
}

/**
 * A `pipeRun` for `serveRuns` that traces each run as `traceRun` does, under
 * the span whose context its request carries (`traceHeaders()` at the
 * submitter), so that a trace shows submitter → worker's run → tools across
 * machines. A request without one starts a trace of its own: headers are
 * the submitter's word, and they only name a parent.
 *
 * ```ts
 * serveRuns(nc, { runOptions, pipeRun: traceServedRuns() }).subscribe();
 * ```
 */
export function traceServedRuns(options: Omit<TraceRunOptions, 'context'> = {}): PipeRun {
  return (events$: Observable<EvoEvent>, request) =>
    events$.pipe(traceRun({ ...options, context: propagation.extract(ROOT_CONTEXT, request.headers) }));
}
