import type { JsMsg } from '@nats-io/jetstream';
import type { RunOptions } from '../process/run.js';
import { checkRunId } from './layout.js';
import { RunHeaders } from './records.js';
import { RunRequest } from './submitRun.js';
import type { WorkerSettings } from './workerTypes.js';

/** A request as taken: the request, or why it cannot be run (with its run id when it names a valid one). */
export type ParsedRequest =
  { readonly request: RunRequest } | { readonly runId: string | undefined; readonly reason: string };

/** The request in a message, or why it cannot be run. */
export function parseRequest(msg: JsMsg): ParsedRequest {
  let runId = msg.headers?.get(RunHeaders.runId) || undefined;
  try {
    if (runId !== undefined) checkRunId(runId);
  } catch {
    runId = undefined;
  }
  let value: unknown;
  try {
    value = msg.json();
  } catch (err) {
    return { runId, reason: `the request is not JSON: ${(err as Error).message}` };
  }
  const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (runId === undefined && typeof body['runId'] === 'string') {
    try {
      checkRunId(body['runId']);
      runId = body['runId'];
    } catch {
      return {
        runId: undefined,
        reason: `the request's runId is not a valid run id: ${JSON.stringify(body['runId'])}`,
      };
    }
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

/** The options of one attempt of a request under a worker's settings. */
export function requestRunOptions(settings: WorkerSettings, request: RunRequest, attempt: number): RunOptions {
  const given = settings.runOptions;
  if (typeof given === 'function') return given(request, attempt);
  const fromRequest: RunOptions = {
    prompt: request.prompt,
    ...(request.autoMode === undefined ? {} : { autoMode: request.autoMode }),
    ...(request.resume === undefined ? {} : { resume: request.resume }),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
  };
  return { ...given, ...fromRequest };
}
