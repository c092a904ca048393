import type { Colors } from 'picocolors/types.js';
import { showControls } from '../src/controls.js';
import type { RunSummary } from '../operators/summarize.js';
import type { ToolInvocation } from '../operators/pairToolCalls.js';
import type { ViewAction, ViewModel, ViewPanel } from './model.js';

// How the live view looks: the frame redrawn in place on a terminal, and the
// lines printed one by one elsewhere.

/** The terminal size a frame must fit. */
export interface FrameSize {
  readonly columns: number;
  readonly rows: number;
}

const number = new Intl.NumberFormat('en-US');

/** Helpers shared by the frame renderer and the plain line output. */
export const formatting = {
  /** Cuts plain text to `width` characters, on one line. */
  /** Cuts untrusted text to `width` characters on one line, every control character shown, never interpreted. */
  fit(text: string, width: number): string {
    const line = showControls(text.replace(/\s+/g, ' ').trim());
    return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  },

  /** The most telling argument of a call: its first string value. */
  brief(args: Readonly<Record<string, unknown>>): string {
    const first = Object.values(args).find((v): v is string => typeof v === 'string');
    return first ?? (Object.keys(args).length ? preview(args) : '');
  },

  seconds(invocation: ToolInvocation): string {
    return invocation.endedAt === undefined
      ? ''
      : `${((invocation.endedAt - invocation.startedAt) / 1000).toFixed(1)}s`;
  },

  icon(invocation: ToolInvocation, c: Colors, spinner: string): string {
    switch (invocation.status) {
      case 'running':
        return c.cyan(spinner);
      case 'succeeded':
        return c.green('✓');
      case 'failed':
        return c.red('✗');
      case 'unfinished':
        return c.yellow('…');
      case 'awaiting-input':
        return c.yellow('?');
    }
  },

  tokens(n: number): string {
    return number.format(n);
  },

  /** What a run that stopped to ask is waiting for: each question with its choices, each approval with its call. */
  pending(summary: RunSummary, c: Colors): string[] {
    const lines: string[] = [];
    for (const ask of summary.pendingQuestions) {
      for (const q of ask.questions) {
        lines.push(`${c.yellow('?')} ${f.fit(q.question, 200)}${q.required === false ? c.dim(' (optional)') : ''}`);
        for (const choice of q.choices ?? []) lines.push(`    · ${f.fit(choice.value, 200)}`);
      }
    }
    for (const approval of summary.pendingApprovals) {
      for (const request of approval.action_requests) {
        const config = approval.review_configs.find((r) => r.action_name === request.name);
        const decisions = config?.allowed_decisions?.join(' / ');
        lines.push(
          `${c.yellow('!')} approve ${c.bold(f.fit(request.name, 60))} ${c.dim(f.fit(preview(request.args ?? {}), 200))}`,
        );
        if (request.description) lines.push(`    ${f.fit(request.description, 200)}`);
        if (decisions) lines.push(c.dim(`    ${f.fit(decisions, 100)}`));
      }
    }
    return lines;
  },

  /**
   * `completed · 9 tool calls (1 failed) · 3 sub-agents · 23,456 tokens (… in · … out) · 164 events`.
   * Tool calls are every invocation but the `task` calls that start
   * sub-agents, which are counted as sub-agents; errors, questions, approvals
   * and panel dispatches when there are any.
   */
  summaryLine(summary: RunSummary): string {
    const tools = toolCalls(summary);
    const failed = tools.filter((i) => i.status === 'failed').length;
    const { inputTokens, outputTokens, totalTokens } = summary.usage;
    const some = (n: number, noun: string) => (n > 0 ? [plural(n, noun)] : []);
    return [
      summary.outcome,
      `${plural(tools.length, 'tool call')}${failed ? ` (${failed} failed)` : ''}`,
      plural(summary.delegations.length, 'sub-agent'),
      ...some(summary.panelDispatches.length, 'panel dispatch'),
      ...some(summary.errors.length, 'error'),
      ...some(
        summary.questions.reduce((n, q) => n + q.questions.length, 0),
        'question',
      ),
      ...some(
        summary.interrupts.reduce((n, i) => n + i.action_requests.length, 0),
        'approval',
      ),
      `${number.format(totalTokens)} tokens (${number.format(inputTokens)} in · ${number.format(outputTokens)} out)`,
      plural(summary.events, 'event'),
    ].join(' · ');
  },
};
/** `1 tool call`, `2 tool calls`, `1 panel dispatch`, `2 panel dispatches`. */
export function plural(n: number, noun: string): string {
  const many = /(?:s|sh|ch|x)$/.test(noun) ? `${noun}es` : `${noun}s`;
  return `${number.format(n)} ${n === 1 ? noun : many}`;
}

/** The invocations a summary counts as tool calls: all but the `task` calls, which are the sub-agents. */
export function toolCalls(summary: RunSummary): RunSummary['invocations'] {
  return summary.invocations.filter((i) => i.name !== 'task');
}

/** Short name where the helpers are used. */
const f = formatting;

/** A value as JSON for a preview: one that nests too deep to write is said to, not thrown. */
function preview(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '(too deeply nested to show)';
  }
}

function toolLine(invocation: ToolInvocation, c: Colors, spinner: string, width: number, indent: string): string {
  const time = f.seconds(invocation);
  const name = f.fit(invocation.name, 40);
  const room = width - indent.length - name.length - time.length - 5;
  const detail = f.fit(
    invocation.status === 'failed' ? (invocation.result ?? '') : f.brief(invocation.args),
    Math.max(0, room),
  );
  return `${indent}${f.icon(invocation, c, spinner)} ${c.bold(name)} ${c.dim(detail)} ${c.dim(time)}`.trimEnd();
}

/** Keeps the last `max` lines, saying how many were left out. */
function tail(lines: string[], max: number, c: Colors, indent = '  '): string[] {
  if (lines.length <= max) return lines;
  const kept = lines.slice(lines.length - Math.max(1, max - 1));
  return [c.dim(`${indent}… ${lines.length - kept.length} earlier`), ...kept];
}

/** The last `max` lines of a list of `total` of which only the last `shown` were drawn. */
function lastOf(lines: string[], total: number, max: number, c: Colors, indent = '  '): string[] {
  const hidden = total - lines.length;
  if (hidden <= 0) return tail(lines, max, c, indent);
  const kept = lines.slice(lines.length - Math.max(1, max - 1));
  return [c.dim(`${indent}… ${total - kept.length} earlier`), ...kept];
}

function panelLine(panel: ViewPanel, c: Colors, spinner: string, width: number): string {
  const icon = panel.status === 'running' ? c.cyan(spinner) : panel.status === 'completed' ? c.green('✓') : c.red('✗');
  const time = panel.durationMs === undefined ? '' : `${(panel.durationMs / 1000).toFixed(1)}s`;
  const detail = panel.error ?? panel.subagentType;
  return `  ${icon} ${c.bold(f.fit(panel.label || panel.id, 40))} ${c.dim(f.fit(detail, Math.max(0, width - 50)))} ${c.dim(time)}`.trimEnd();
}

/**
 * One frame of the live view: tools with their state, the sub-agent tree with
 * its own tools, the assistant's latest text and the token counter, cut to
 * fit the terminal so in-place updates never scroll.
 */
export function renderFrame(state: ViewModel, c: Colors, spinner: string, size: FrameSize): string {
  const width = Math.max(40, size.columns);
  const budget = Math.max(8, size.rows - 2);
  const toolRoom = Math.max(3, Math.floor(budget * 0.3));
  const tools = state.tools.last(toolRoom).map((t) => toolLine(t, c, spinner, width, '  '));
  const tree = state.delegations.slice(-toolRoom).flatMap((d) => {
    const icon = d.events === undefined ? c.cyan(spinner) : d.run.ended ? c.green('✓') : c.yellow('…');
    const name = f.fit(d.run.name, 40);
    const head = `  ${icon} ${c.magenta(c.bold(name))} ${c.dim(f.fit(d.run.description, width - name.length - 8))}`;
    const own = d.tools.last(3).map((t) => toolLine(t, c, spinner, width, '      '));
    return [head, ...lastOf(own, d.tools.size, 3, c, '      ')];
  });
  const panels = [...state.panels.values()].slice(-toolRoom).map((p) => panelLine(p, c, spinner, width));
  const text = (state.text || state.thinking).split('\n').filter((l) => l.trim() !== '');
  const { inputTokens, outputTokens, totalTokens } = state.usage;
  const footer = c.dim(
    `tokens ${f.tokens(totalTokens)}  (${f.tokens(inputTokens)} in · ${f.tokens(outputTokens)} out)`,
  );
  const lines: string[] = [];
  const section = (title: string, body: string[], max: number) => {
    if (body.length) lines.push(c.bold(title), ...tail(body, max, c));
  };
  const listed = (title: string, body: string[], total: number, max: number) => {
    if (body.length) lines.push(c.bold(title), ...lastOf(body, total, max, c));
  };
  listed('Tools', tools, state.tools.size, toolRoom);
  section('Sub-agents', tree, toolRoom);
  listed('Panel', panels, state.panels.size, Math.max(2, Math.floor(budget * 0.15)));
  const textLines = text.map((l) => `  ${f.fit(l, width - 2)}`);
  section(
    state.text ? 'Assistant' : 'Thinking',
    state.text ? textLines : textLines.map((l) => c.dim(l)),
    Math.max(2, budget - lines.length - 3),
  );
  for (const error of state.errors) lines.push(c.red(f.fit(`error: ${error}`, width)));
  lines.push(footer);
  return lines.join('\n');
}

/**
 * A line of the plain (non-TTY) output for an action, or `undefined` for none;
 * `view` (the state the action was applied to) names panel dispatches by label.
 */
export function describeAction(action: ViewAction, c: Colors, width = 100, view?: ViewModel): string | undefined {
  switch (action.kind) {
    case 'tool': {
      const { invocation, delegation } = action;
      if (invocation.status === 'running') return undefined;
      const where = delegation ? `  ${c.magenta(f.fit(delegation.name, 40))} › ` : '';
      const detail = invocation.status === 'failed' ? (invocation.result ?? '') : f.brief(invocation.args);
      return `${where}${f.icon(invocation, c, '')} ${f.fit(invocation.name, 40)} ${c.dim(f.fit(detail, width - 30))} ${c.dim(f.seconds(invocation))}`.trimEnd();
    }
    case 'subagent-end': {
      // Printed at the end, not the start: by then a placeholder name has been replaced.
      const name = f.fit(action.delegation.name, 40);
      const { description } = action.delegation;
      const mark = action.delegation.ended ? '■' : c.yellow('□');
      const state = action.delegation.ended ? '' : ', unfinished';
      return `${mark} ${c.magenta(name)} ${c.dim(f.fit(description, width - name.length - 20))} (${plural(action.events, 'event')}${state})`;
    }
    case 'error':
      return c.red(`error: ${f.fit(action.event.message, width * 4)}`);
    case 'panel': {
      const { event } = action;
      if (event.type === 'panel_dispatch_start') return undefined;
      const time = `${(event.duration_ms / 1000).toFixed(1)}s`;
      const name = f.fit(view?.panels.get(event.id)?.label || event.id, 40);
      return event.type === 'panel_dispatch_complete'
        ? `${c.green('✓')} panel ${name} ${c.dim(time)}`
        : `${c.red('✗')} panel ${name} ${f.fit(event.error, width - 50)} ${c.dim(time)}`;
    }
    default:
      return undefined;
  }
}
