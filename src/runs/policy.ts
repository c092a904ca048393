// How a hub starts a run: its own options, and the few fields a request may
// set. A request is checked where it enters, and the hub's settings win.
import { createHash } from 'node:crypto';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { RunOptions } from '../process/run.js';
import { REQUEST_FIELDS, requestedRunOptions, type RequestField } from '../process/requestedOptions.js';
import { RunRequestError } from './errors.js';
import { StartRequest, THREAD_ID } from './wire.js';

/** How a hub runs what it is asked to run. */
export interface RunPolicy {
  /**
   * The options of each run: the hub's own, to which a request adds only
   * its `prompt`, the thread it `resume`s and the fields of
   * `allowFromRequest`; or a function of the request and the run's id that
   * returns them all.
   */
  readonly runOptions?: Omit<RunOptions, 'prompt'> | ((request: StartRequest, id: string) => RunOptions) | undefined;
  /** The fields a request may set besides its prompt and resume. Default none: a request that sets another is refused. */
  readonly allowFromRequest?: readonly RequestField[] | undefined;
}

/** A prompt is one argv element: Linux takes at most 131,072 bytes. */
const MAX_PROMPT_BYTES = 131_072;
/** Metadata as JSON, in UTF-8 bytes as it is stored and sent: a character may take four. */
const MAX_METADATA_BYTES = 16 * 1024;
const START_FIELDS = new Set(['prompt', 'resume', ...REQUEST_FIELDS, 'metadata']);

/** The request in `value`, or a `RunRequestError` saying what is wrong with it. */
export function checkStartRequest(value: unknown): StartRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RunRequestError('a start request is a JSON object');
  const unknown = Object.keys(value).find((key) => !START_FIELDS.has(key));
  if (unknown !== undefined)
    throw new RunRequestError(`a start request has no field ${JSON.stringify(unknown.slice(0, 40))}`);
  const decoded = StartRequest.decode(value);
  if (isLeft(decoded))
    throw new RunRequestError(
      'a start request is {"prompt": string} with optional resume, workdir, autoMode, timeoutMs, metadata (strings)',
    );
  const request = decoded.right;
  if (request.prompt.trim() === '') throw new RunRequestError('prompt must not be empty');
  if (Buffer.byteLength(request.prompt) > MAX_PROMPT_BYTES)
    throw new RunRequestError(`prompt is over ${MAX_PROMPT_BYTES} bytes, more than one argument can hold`);
  if (request.resume !== undefined && !THREAD_ID.test(request.resume))
    throw new RunRequestError('resume must be a thread id a run reported');
  if (request.timeoutMs !== undefined && !(Number.isSafeInteger(request.timeoutMs) && request.timeoutMs > 0))
    throw new RunRequestError('timeoutMs must be a whole number of milliseconds above 0');
  if (request.metadata !== undefined && Buffer.byteLength(JSON.stringify(request.metadata)) > MAX_METADATA_BYTES)
    throw new RunRequestError(`metadata is over ${MAX_METADATA_BYTES} bytes`);
  return request;
}

/** Checks `allowFromRequest` once, when the hub is made. */
export function allowedFields(given: readonly RequestField[] | undefined): readonly RequestField[] {
  const fields: readonly unknown[] = Array.isArray(given) ? given : given === undefined ? [] : [given];
  const bad = fields.find((field) => !(REQUEST_FIELDS as readonly unknown[]).includes(field));
  if (bad !== undefined || !(given === undefined || Array.isArray(given)))
    throw new TypeError(`allowFromRequest takes ${REQUEST_FIELDS.join(', ')}; got ${JSON.stringify(bad ?? given)}`);
  return fields as readonly RequestField[];
}

/** The options of a run under the hub's policy; `RunRequestError` for a field the policy does not let through. */
export function policyRunOptions(
  policy: RunPolicy,
  allowed: readonly RequestField[],
  request: StartRequest,
  id: string,
): RunOptions {
  for (const field of REQUEST_FIELDS) {
    if (request[field] !== undefined && !allowed.includes(field))
      throw new RunRequestError(`this hub does not take "${field}" from requests`);
  }
  const given = policy.runOptions;
  if (typeof given === 'function') return given(request, id);
  return requestedRunOptions(given, request, allowed);
}

/** A fingerprint, as `fingerprintOf` makes it: a SHA-256 in base64url. */
export const FINGERPRINT = /^[A-Za-z0-9_-]{43}$/;

/** What makes two requests the same request, whatever the order of their keys. */
export function fingerprintOf(request: StartRequest): string {
  const { prompt, resume, workdir, autoMode, timeoutMs, metadata } = request;
  const sortedMetadata = metadata && Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : 1)));
  const canonical = JSON.stringify([prompt, resume, workdir, autoMode, timeoutMs, sortedMetadata]);
  return createHash('sha256').update(canonical).digest('base64url');
}

/** An idempotency key: 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new RunRequestError('an idempotency key is 1 to 255 visible ASCII characters');
}
