// The small HTTP vocabulary of the runs handler: its answers, and a bounded JSON body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RunHubError } from '../errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(value));
}

/** The media type of a request's body, lower case, without its parameters. */
function mediaType(req: IncomingMessage): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
}

/**
 * The body as JSON, refused unless it is declared `application/json` (a
 * type a page of another origin cannot send without a preflight, which this
 * handler never grants) and fits in `maxBytes`. A body an app's own parser
 * (Express's `json()`, Nest's) already read is taken as it parsed it.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  if (mediaType(req) !== 'application/json') throw new RunHubError('the body must be sent as application/json', 415);
  const parsed = (req as { body?: unknown }).body;
  if (parsed !== undefined && req.readableEnded) return parsed;
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new RunHubError(`request body over ${maxBytes} bytes`, 413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new RunHubError(`request body over ${maxBytes} bytes`, 413);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new RunHubError('the body is not JSON', 400);
  }
}
