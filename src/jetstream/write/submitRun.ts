import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { checkRunId, layoutOf, type LayoutOptions } from '../wire/layout.js';
import { DEFAULTS } from '../wire/defaults.js';
import { publishStored } from './publishStored.js';
import { RunHeaders, utf8 } from '../wire/records.js';
import { checkRequestHeaders, type RequestHeaders } from '../wire/requestHeaders.js';
import { RunRequest } from '../wire/runRequest.js';

/** Options of `submitRun`. */
export interface SubmitRunOptions extends LayoutOptions {
  /** Milliseconds to wait for the stream's ack, and for how long to retry. Defaults 5000 and 30,000. */
  readonly ackTimeoutMs?: number;
  /** How long to retry the publish while the broker does not answer (default 30,000). */
  readonly retryForMs?: number;
  /** Headers the workers' `pipeRun` reads, such as `traceHeaders()` of `evosci-rx/otel`. */
  readonly headers?: RequestHeaders;
}

/**
 * Queues a run for the workers of `serveRuns` and returns its run id (a new
 * uuid unless `request.runId` is given). The request is stored when this
 * resolves; submitting the same run id again within the stream's duplicate
 * window stores nothing more. Follow the run with `fromJetStream(nc, runId)`.
 *
 * ```ts
 * const runId = await submitRun(nc, { prompt: 'Survey sparse attention' });
 * const summary = await lastValueFrom(fromJetStream(nc, runId).pipe(summarize()));
 * ```
 */
export async function submitRun(
  nc: NatsConnection,
  request: Omit<RunRequest, 'runId'> & { readonly runId?: string },
  options: SubmitRunOptions = {},
): Promise<string> {
  if (typeof request?.prompt !== 'string' || request.prompt === '')
    throw new TypeError('submitRun: prompt must be a non-empty string');
  const runId = request.runId ?? randomUUID();
  checkRunId(runId);
  const full: RunRequest = { ...request, runId };
  if (!RunRequest.is(full))
    throw new TypeError(`submitRun: not a run request: ${JSON.stringify(request).slice(0, 200)}`);
  const extra = checkRequestHeaders(options.headers);
  const layout = layoutOf(options);
  await publishStored(
    nc,
    { subject: layout.requestsSubject, msgID: `${runId}.request`, headers: { ...extra, [RunHeaders.runId]: runId } },
    utf8.encode(JSON.stringify(full)),
    {
      ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
      retryForMs: options.retryForMs ?? DEFAULTS.retryForMs,
    },
  );
  return runId;
}
