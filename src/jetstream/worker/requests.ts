import type { RunOptions } from '../../process/run.js';
import { checkRunId } from '../wire/layout.js';
import { RunHeaders } from '../wire/records.js';
import { RunRequest } from '../wire/runRequest.js';
import { REQUEST_FIELDS, requestedRunOptions } from '../../process/requestedOptions.js';
import type { WorkerSettings } from './workerTypes.js';
import type { RequestDelivery } from './RequestDelivery.js';

/** A request as taken: the request, or why it cannot be run (with its run id when it names a valid one). */
export type ParsedRequest =
  { readonly request: RunRequest } | { readonly runId: string | undefined; readonly reason: string };

/** Whether `runId` is one `checkRunId` accepts. */
function isRunId(runId: string): boolean {
  try {
    checkRunId(runId);
    return true;
  } catch {
    return false;
  }
}

/** The request in a message, or why it cannot be run. */
export function parseRequest(msg: RequestDelivery): ParsedRequest {
  let runId = msg.headers?.has(RunHeaders.runId) ? msg.headers.get(RunHeaders.runId) : undefined;
  // A header that names no valid run refuses the request: the body's runId is not taken in its place.
  if (runId !== undefined && !isRunId(runId)) {
    return {
      runId: undefined,
      reason: `the request's ${RunHeaders.runId} header is not a valid run id: ${JSON.stringify(runId)}`,
    };
  }
  let value: unknown;
  try {
    value = msg.json();
  } catch (err) {
    return { runId, reason: `the request is not JSON: ${(err as Error).message}` };
  }
  const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (runId !== undefined && body['runId'] !== undefined && body['runId'] !== runId) {
    return {
      runId: undefined,
      reason: `the request's header names run ${runId} and its body ${JSON.stringify(body['runId'])}`,
    };
  }
  if (runId === undefined && typeof body['runId'] === 'string') {
    if (!isRunId(body['runId'])) {
      return {
        runId: undefined,
        reason: `the request's runId is not a valid run id: ${JSON.stringify(body['runId'])}`,
      };
    }
    runId = body['runId'];
  }
  if (typeof body['prompt'] !== 'string' || body['prompt'] === '') {
    return { runId, reason: 'the request has no prompt: a non-empty string "prompt" is required' };
  }
  const request = { ...body, runId };
  if (runId === undefined || !RunRequest.is(request)) {
    return {
      runId,
      reason: `the request is not a run request (runId, prompt, and optional workdir, autoMode, resume, timeoutMs, metadata)`,
    };
  }
  return { request };
}

/** Why a worker refuses a request: the first field it sets that the worker does not take from requests. */
export function refusedField(settings: WorkerSettings, request: RunRequest): string | undefined {
  for (const field of REQUEST_FIELDS) {
    if (request[field] === undefined || settings.allowFromRequest.includes(field)) continue;
    const allowed = settings.allowFromRequest.length ? settings.allowFromRequest.join(', ') : 'none';
    return `the request sets "${field}", which this worker does not take from requests (allowFromRequest: ${allowed})`;
  }
  return undefined;
}

/**
 * The options of one attempt of a request under a worker's settings: the
 * worker's own, with the request's prompt, the thread it resumes and the
 * fields the worker allows. `run()` then checks them as it checks any.
 */
export function requestRunOptions(settings: WorkerSettings, request: RunRequest, attempt: number): RunOptions {
  const given = settings.runOptions;
  if (typeof given === 'function') return given(request, attempt);
  return requestedRunOptions(given, request, settings.allowFromRequest);
}
