import type { Colors } from 'picocolors/types.js';
import type { ToolInvocation } from '../operators/ToolInvocation.js';
import { formatting as f } from './formatting.js';
import type { FrameSize } from './FrameSize.js';
import type { ViewState } from './ViewState.js';


function toolLine(invocation: ToolInvocation, c: Colors, spinner: string, width: number, indent: string): string {
  const time = f.seconds(invocation);
  const room = width - indent.length - invocation.name.length - time.length - 5;
  const detail = f.fit(invocation.status === 'failed' ? (invocation.result ?? '') : f.brief(invocation.args), Math.max(0, room));
  return `${indent}${f.icon(invocation, c, spinner)} ${c.bold(invocation.name)} ${c.dim(detail)} ${c.dim(time)}`.trimEnd();
}

/** Keeps the last `max` lines, saying how many were left out. */
function tail(lines: string[], max: number, c: Colors, indent = '  '): string[] {
  if (lines.length <= max) return lines;
  const kept = lines.slice(lines.length - Math.max(1, max - 1));
  return [c.dim(`${indent}… ${lines.length - kept.length} earlier`), ...kept];
}

/**
 * One frame of the live view: tools with their state, the sub-agent tree with
 * its own tools, the assistant's latest text and the token counter, cut to
 * fit the terminal so in-place updates never scroll.
 */
export function renderFrame(state: ViewState, c: Colors, spinner: string, size: FrameSize): string {
  const width = Math.max(40, size.columns);
  const budget = Math.max(8, size.rows - 2);
  const tools = [...state.tools.values()].map((t) => toolLine(t, c, spinner, width, '  '));
  const tree = state.delegations.flatMap((d) => {
    const icon = d.events === undefined ? c.cyan(spinner) : c.green('✓');
    const head = `  ${icon} ${c.magenta(c.bold(d.run.name))} ${c.dim(f.fit(d.run.description, width - d.run.name.length - 8))}`;
    return [head, ...tail([...d.tools.values()].map((t) => toolLine(t, c, spinner, width, '      ')), 3, c, '      ')];
  });
  const text = (state.text || state.thinking).split('\n').filter((l) => l.trim() !== '');
  const { inputTokens, outputTokens, totalTokens } = state.usage;
  const footer = c.dim(`tokens ${f.tokens(totalTokens)}  (${f.tokens(inputTokens)} in · ${f.tokens(outputTokens)} out)`);
  const lines: string[] = [];
  const section = (title: string, body: string[], max: number) => {
    if (body.length) lines.push(c.bold(title), ...tail(body, max, c));
  };
  section('Tools', tools, Math.max(3, Math.floor(budget * 0.3)));
  section('Sub-agents', tree, Math.max(3, Math.floor(budget * 0.3)));
  const textLines = text.map((l) => `  ${f.fit(l, width - 2)}`);
  section(state.text ? 'Assistant' : 'Thinking', state.text ? textLines : textLines.map((l) => c.dim(l)), Math.max(2, budget - lines.length - 3));
  for (const error of state.errors) lines.push(c.red(f.fit(`error: ${error}`, width)));
  lines.push(footer);
  return lines.join('\n');
}
