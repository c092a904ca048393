import type { MsgHdrs } from '@nats-io/transport-node';
import type { RequestHeaders } from './pipeRun.js';

export type { RequestHeaders } from './pipeRun.js';

const NAME = /^[A-Za-z0-9-]{1,64}$/;
const RESERVED = /^(nats|evosci)-/i;
const MAX_VALUE_CHARS = 1024;
const MAX_HEADERS = 16;

function usable(name: string, value: unknown): value is string {
  return (
    NAME.test(name) &&
    !RESERVED.test(name) &&
    typeof value === 'string' &&
    value.length <= MAX_VALUE_CHARS &&
    !/[\r\n\0]/.test(value)
  );
}

/** The app's headers for `submitRun`, checked; a `TypeError` names the first that is not usable. */
export function checkRequestHeaders(headers: RequestHeaders | undefined): RequestHeaders {
  if (headers === undefined) return {};
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS)
    throw new TypeError(`submitRun: at most ${MAX_HEADERS} headers, got ${entries.length}`);
  for (const [name, value] of entries) {
    if (!usable(name, value)) {
      throw new TypeError(
        `submitRun: header ${JSON.stringify(name.slice(0, 64))} is not usable: a name of letters, digits and dashes ` +
          `(not Nats-… or EvoSci-…) and a string value of at most ${MAX_VALUE_CHARS} characters on one line`,
      );
    }
  }
  return headers;
}

/** The app's headers of a delivered request: the usable ones, the first value of each; the rest are left out. */
export function requestHeadersOf(headers: MsgHdrs | undefined): RequestHeaders {
  const found: Record<string, string> = {};
  if (!headers) return found;
  for (const name of headers.keys()) {
    const value = headers.get(name);
    if (Object.keys(found).length < MAX_HEADERS && usable(name, value)) found[name] = value;
  }
  return found;
}
