// What the app's code sees of a served run, with no NATS type in it: `evosci-rx/otel` declares `traceHeaders` and
// `traceServedRuns` with these, and its declarations must compile in an app that has not installed the NATS client.
import type { Observable } from 'rxjs';
import type { EvoEvent } from '../../events/codecs.js';

/**
 * Headers an app adds to a run request, such as W3C trace context
 * (`traceparent`, `tracestate`). They cross the broker, so both ends check
 * them: a name of letters, digits and dashes, not one the broker or this
 * library uses (`Nats-…`, `EvoSci-…`), and a short value on one line.
 */
export type RequestHeaders = Readonly<Record<string, string>>;

/** A run's events as a worker publishes them, wrapped by the app with what its request carried. */
export type PipeRun = (
  events$: Observable<EvoEvent>,
  request: { readonly runId: string; readonly attempt: number; readonly headers: RequestHeaders },
) => Observable<EvoEvent>;
