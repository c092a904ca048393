import { stringifyPythonJson } from '../src/events/decode/pythonJson.js';
import type { ToolInvocation } from './ToolCallTracker.js';
import { cutText } from '../src/common/cutText.js';

/** How many tool calls there are in each state, and in all. */
export type ToolCallCounts = { readonly [S in ToolInvocation['status']]: number } & {
  /** Every invocation, whatever its status. */
  readonly total: number;
};

/**
 * Whether an invocation counts as a tool call: every invocation but `task`,
 * whose call starts a sub-agent and is counted as that delegation instead.
 */
export function isToolCall(invocation: Pick<ToolInvocation, 'name'>): boolean {
  return invocation.name !== 'task';
}

/**
 * The tool calls among `invocations` (see `isToolCall`), counted by state:
 * what a summary line, a dashboard or a fleet table shows.
 *
 * ```ts
 * const { total, failed } = countToolCalls(summary.invocations);
 * ```
 */
export function countToolCalls(invocations: Iterable<Pick<ToolInvocation, 'name' | 'status'>>): ToolCallCounts {
  const counts = { running: 0, succeeded: 0, failed: 0, unfinished: 0, 'awaiting-input': 0, total: 0 };
  for (const invocation of invocations) {
    if (!isToolCall(invocation)) continue;
    counts[invocation.status]++;
    counts.total++;
  }
  return counts;
}

/**
 * The most telling argument of a call, for a one-line preview: its first
 * string value, else its arguments as JSON (one that nests too deep to write
 * is said to, not thrown); cut to `width` characters.
 */
export function briefArgs(args: Readonly<Record<string, unknown>>, width = Infinity): string {
  const first = Object.values(args).find((v): v is string => typeof v === 'string');
  const text = first ?? (Object.keys(args).length ? jsonPreview(args) : '');
  return cutText(text, width);
}

/**
 * A value as JSON for a preview, non-finite numbers as the producer wrote
 * them (`NaN`, not `null`); one that nests too deep to write is said to, not thrown.
 */
export function jsonPreview(value: unknown): string {
  try {
    return stringifyPythonJson(value);
  } catch {
    return '(too deeply nested to show)';
  }
}
