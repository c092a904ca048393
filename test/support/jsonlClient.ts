// A reader of a run's JSONL body for the tests, as an app reads it with
// `fetch`: the lines that came, and whether the body ended or broke off.

export interface JsonlRead {
  readonly status: number;
  /** Each whole line that came, in order. */
  readonly lines: string[];
  /** Why reading the body failed (it was cut off), or `undefined` when it ended. */
  readonly error: unknown;
}

/** Reads `url` as JSONL to its end, or until reading it fails. */
export async function readJsonl(url: string, headers: Record<string, string> = {}): Promise<JsonlRead> {
  const res = await fetch(url, { headers });
  if (!res.body) return { status: res.status, lines: [], error: undefined };
  const reader = res.body.getReader();
  const utf8 = new TextDecoder();
  let text = '';
  let error: unknown;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += utf8.decode(value, { stream: true });
    }
  } catch (err) {
    error = err ?? new Error('the body failed');
  }
  const lines = text.split('\n');
  lines.pop();
  return { status: res.status, lines, error };
}
