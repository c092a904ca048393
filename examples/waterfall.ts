// A trace as a trace backend draws it: each span on its own line, indented
// under its parent, with a bar where it ran on the run's time axis.
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

const BAR = 32;
const LABEL = 46;

const ms = ([s, ns]: [number, number]): number => s * 1000 + ns / 1e6;

function duration(span: ReadableSpan): string {
  const d = ms(span.duration);
  return d < 1000 ? `${Math.round(d)} ms` : `${(d / 1000).toFixed(1)} s`;
}

/** ✗ for error status, … for a call the run stopped to ask about, ∅ for one it never finished. */
function mark(span: ReadableSpan): string {
  if (span.status.code === SpanStatusCode.ERROR) return '✗';
  const status = span.attributes['evosci.tool.status'];
  if (status === 'awaiting-input') return '…';
  if (status === 'unfinished') return '∅';
  return '✓';
}

/** The spans of one trace as indented lines, children in start order, with durations. */
export function waterfall(spans: readonly ReadableSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  for (const list of children.values()) list.sort((a, b) => ms(a.startTime) - ms(b.startTime));
  const roots = children.get(undefined) ?? [];
  const start = Math.min(...roots.map((s) => ms(s.startTime)));
  const end = Math.max(...roots.map((s) => ms(s.endTime)));
  const scale = BAR / Math.max(1, end - start);
  const lines: string[] = [];
  const draw = (span: ReadableSpan, depth: number) => {
    const label = `${'  '.repeat(depth)}${mark(span)} ${span.name}`;
    const from = Math.floor((ms(span.startTime) - start) * scale);
    const width = Math.max(1, Math.round(ms(span.duration) * scale));
    const bar = `${' '.repeat(from)}${'█'.repeat(Math.min(width, BAR - from))}`.padEnd(BAR);
    const cut = label.length > LABEL ? `${label.slice(0, LABEL - 1)}…` : label.padEnd(LABEL);
    lines.push(`${cut} |${bar}| ${duration(span)}`);
    for (const child of children.get(span.spanContext().spanId) ?? []) draw(child, depth + 1);
  };
  for (const root of roots) draw(root, 0);
  return lines.join('\n');
}
