// A reader of a run's Server-Sent Events for the tests: each frame as it
// came, and a way to drop the connection after a number of events.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseRead {
  readonly status: number;
  readonly frames: EventSourceMessage[];
  /** Whether the reader dropped the connection itself, before the stream ended. */
  readonly dropped: boolean;
}

/** Reads `url` as SSE until it ends, or until `dropAfter` events have come (then drops it). */
export async function readSse(
  url: string,
  options: { lastEventId?: string; dropAfter?: number; headers?: Record<string, string> } = {},
): Promise<SseRead> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const res = await fetch(url, { headers, signal: abort.signal });
  const frames: EventSourceMessage[] = [];
  if (!res.ok || !res.body) return { status: res.status, frames, dropped: false };
  let events = 0;
  const parser = createParser({
    onEvent: (message) => {
      frames.push(message);
      if (message.event === undefined) events++;
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (options.dropAfter !== undefined && events >= options.dropAfter) {
        abort.abort();
        break;
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  }
  return { status: res.status, frames, dropped: abort.signal.aborted };
}

/** A JSON request; the answer's status, headers and body. */
export async function call(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}
