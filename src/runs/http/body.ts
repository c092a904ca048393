// The small HTTP vocabulary of the runs handler: its answers, and a bounded JSON body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RunHubError } from '../errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
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
  const text = await readText(req, maxBytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new RunHubError('the body is not JSON', 400);
  }
}

/** The body's text; a body that breaks off (the client went, a bad chunk) is the request's fault: 400. */
async function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Left unread past the limit, not destroyed: the 413 still reaches the client, and Node drains the rest.
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new RunHubError(`request body over ${maxBytes} bytes`, 413);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof RunHubError) throw err;
    throw new RunHubError('the request body could not be read to its end', 400);
  }
  return Buffer.concat(chunks).toString('utf8');
}
