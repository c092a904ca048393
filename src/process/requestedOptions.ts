// How a run asked for by someone else (an HTTP request, a broker message)
// becomes `run()` options: the server's or worker's own settings win, and a
// request sets only its prompt, the thread it resumes and the fields allowed.
import type { RunOptions } from './options.js';

/** The fields of a request that set how it runs, besides its prompt and the thread it resumes. */
export const REQUEST_FIELDS = ['workdir', 'autoMode', 'timeoutMs'] as const;
/** One of `REQUEST_FIELDS`: `workdir`, `autoMode` or `timeoutMs`. */
export type RequestField = (typeof REQUEST_FIELDS)[number];

/** What a request may ask of a run. */
export type RequestedRun = Pick<RunOptions, 'prompt' | 'resume' | RequestField>;

/**
 * The options of a requested run: `own` (the server's or worker's), with the
 * request's prompt, the thread it resumes and the fields `allowed` lets it
 * set. `run()` then checks them as it checks any.
 */
export function requestedRunOptions(
  own: Omit<RunOptions, 'prompt'> | undefined,
  request: RequestedRun,
  allowed: readonly RequestField[],
): RunOptions {
  const fromRequest: Partial<Pick<RunOptions, RequestField>> = {};
  for (const field of allowed) {
    if (request[field] !== undefined) Object.assign(fromRequest, { [field]: request[field] });
  }
  return {
    ...own,
    ...fromRequest,
    prompt: request.prompt,
    ...(request.resume === undefined ? {} : { resume: request.resume }),
  };
}
