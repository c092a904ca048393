// The small HTTP vocabulary of the dashboard server: an error with a status,
// the answers it sends, and a bounded JSON body.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A refusal: its status and the message the client is sent. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

/** The media type of a request's body, lower case, without its parameters. */
export function mediaType(req: IncomingMessage): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
}

/**
 * The body as a JSON object, refused unless it is declared `application/json`
 * (a type a page of another origin cannot send without a preflight, which
 * this server never grants) and fits in `maxBytes`.
 */
export async function readJsonObject(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  if (mediaType(req) !== 'application/json') throw new HttpError(415, 'the body must be sent as application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `request body over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks).toString('utf8');
  let value: unknown;
  try {
    value = body === '' ? {} : JSON.parse(body);
  } catch {
    throw new HttpError(400, 'body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'body is not a JSON object');
  return value as Record<string, unknown>;
}
