import type { Colors } from 'picocolors/types.js';
import { showControls } from '../src/common/terminalText.js';
import {
  briefArgs,
  countToolCalls,
  jsonPreview,
  type RunSummary,
  type ToolInvocation,
  type ViewAction,
} from '../operators/index.js';
import type { ViewDelegation, ViewModel, ViewPanel, ViewTool } from './model.js';
import { cutText } from '../src/common/cutText.js';

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
  /** Cuts untrusted text to `width` characters on one line, every control character shown, never interpreted. */
  fit(text: string, width: number): string {
    const line = showControls(text.replace(/\s+/g, ' ').trim());
    return cutText(line, width);
  },

  seconds(invocation: Pick<ToolInvocation, 'startedAt' | 'endedAt'>): string {
    return invocation.endedAt === undefined
      ? ''
      : `${((invocation.endedAt - invocation.startedAt) / 1000).toFixed(1)}s`;
  },

  icon(invocation: Pick<ToolInvocation, 'status'>, c: Colors, spinner: string): string {
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
          `${c.yellow('!')} approve ${c.bold(f.fit(request.name, 60))} ${c.dim(f.fit(jsonPreview(request.args ?? {}), 200))}`,
        );
        if (request.description) lines.push(`    ${f.fit(request.description, 200)}`);
        if (decisions) lines.push(c.dim(`    ${f.fit(decisions, 100)}`));
      }
    }
    return lines;
  },

  /**
   * `completed · 9 tool calls (1 failed) · 3 sub-agents · 23,456 main-agent tokens (… in · … out) · 164 events`.
   * Tool calls as `countToolCalls` counts them; errors, questions, approvals
   * and panel dispatches when there are any. The tokens are the main agent's:
   * sub-agents' are in no event.
   */
  summaryLine(summary: RunSummary): string {
    const { total, failed } = countToolCalls(summary.invocations);
    const { inputTokens, outputTokens, totalTokens } = summary.usage;
    const some = (n: number, noun: string) => (n > 0 ? [plural(n, noun)] : []);
    return [
      summary.outcome,
      `${plural(total, 'tool call')}${failed ? ` (${failed} failed)` : ''}`,
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
      `${number.format(totalTokens)} main-agent tokens (${number.format(inputTokens)} in · ${number.format(outputTokens)} out)`,
      plural(summary.events, 'event'),
    ].join(' · ');
  },
};
/** `1 tool call`, `2 tool calls`, `1 panel dispatch`, `2 panel dispatches`. */
export function plural(n: number, noun: string): string {
  const many = /(?:s|sh|ch|x)$/.test(noun) ? `${noun}es` : `${noun}s`;
  return `${number.format(n)} ${n === 1 ? noun : many}`;
}

/** Short name where the helpers are used. */
const f = formatting;

function toolLine(invocation: ViewTool, c: Colors, spinner: string, width: number, indent: string): string {
  const time = f.seconds(invocation);
  const name = f.fit(invocation.name, 40);
  const room = width - indent.length - name.length - time.length - 5;
  const detail = f.fit(invocation.detail, Math.max(0, room));
  return `${indent}${f.icon(invocation, c, spinner)} ${c.bold(name)} ${c.dim(detail)} ${c.dim(time)}`.trimEnd();
}

/** The last `max` of `lines`, the last of a list of `total`, saying how many came before. */
function latestOf(lines: string[], total: number, max: number, c: Colors, indent = '  '): string[] {
  if (total <= max && lines.length <= max) return lines;
  const kept = lines.slice(lines.length - Math.max(1, max - 1));
  return [c.dim(`${indent}… ${total - kept.length} earlier`), ...kept];
}

function panelLine(panel: ViewPanel, c: Colors, spinner: string, width: number): string {
  const icon = panel.status === 'running' ? c.cyan(spinner) : panel.status === 'completed' ? c.green('✓') : c.red('✗');
  const time = panel.durationMs === undefined ? '' : `${(panel.durationMs / 1000).toFixed(1)}s`;
  const detail = panel.error ?? panel.subagentType;
  return `  ${icon} ${c.bold(f.fit(panel.label || panel.id, 40))} ${c.dim(f.fit(detail, Math.max(0, width - 50)))} ${c.dim(time)}`.trimEnd();
}

/** A delegation's head line and its last tools. */
function delegationLines(d: ViewDelegation, c: Colors, spinner: string, width: number): string[] {
  const icon =
    d.tools.inState('awaiting-input') > 0
      ? c.yellow('?')
      : d.events === undefined
        ? c.cyan(spinner)
        : d.run.ended
          ? c.green('✓')
          : c.yellow('…');
  const name = f.fit(d.run.name, 40);
  const head = `  ${icon} ${c.magenta(c.bold(name))} ${c.dim(f.fit(d.run.description, width - name.length - 8))}`;
  const own = d.tools.latest(3).map((t) => toolLine(t, c, spinner, width, '      '));
  return [head, ...latestOf(own, d.tools.size, 3, c, '      ')];
}

/** The frame's sections, each cut to its share of the rows. */
class Frame {
  readonly lines: string[] = [];

  constructor(private readonly c: Colors) {}

  /** The last `max` of `body`, with how many of `total` came before. */
  section(title: string, body: string[], max: number, total = body.length): void {
    if (body.length) this.lines.push(this.c.bold(title), ...latestOf(body, total, max, this.c));
  }
}

/**
 * One frame of the live view: tools with their state, the sub-agent tree with
 * its own tools, the assistant's latest text and the main agent's token
 * counter, cut to fit the terminal so in-place updates never scroll.
 */
export function renderFrame(state: ViewModel, c: Colors, spinner: string, size: FrameSize): string {
  const width = Math.max(40, size.columns);
  const budget = Math.max(8, size.rows - 2);
  const toolRoom = Math.max(3, Math.floor(budget * 0.3));
  const frame = new Frame(c);
  const tools = state.tools.latest(toolRoom).map((t) => toolLine(t, c, spinner, width, '  '));
  frame.section('Tools', tools, toolRoom, state.tools.size);
  const shown = state.delegations.slice(-toolRoom);
  const tree = shown.flatMap((d) => delegationLines(d, c, spinner, width));
  // Lines of the delegations not drawn are not known: each is counted as one.
  frame.section('Sub-agents', tree, toolRoom, tree.length + state.delegationCount - shown.length);
  const panels = [...state.panels.values()].slice(-toolRoom).map((p) => panelLine(p, c, spinner, width));
  frame.section('Panel', panels, Math.max(2, Math.floor(budget * 0.15)), state.panelCount);
  const text = (state.text || state.thinking).split('\n').filter((l) => l.trim() !== '');
  const textLines = text.map((l) => `  ${f.fit(l, width - 2)}`);
  frame.section(
    state.text ? 'Assistant' : 'Thinking',
    state.text ? textLines : textLines.map((l) => c.dim(l)),
    Math.max(2, budget - frame.lines.length - 3),
  );
  const errors = state.errors.slice(-3).map((error) => c.red(f.fit(`error: ${error}`, width)));
  if (state.errorCount > errors.length) frame.lines.push(c.dim(`… ${state.errorCount - errors.length} earlier errors`));
  frame.lines.push(...errors);
  const { inputTokens, outputTokens, totalTokens } = state.usage;
  frame.lines.push(
    c.dim(`main-agent tokens ${f.tokens(totalTokens)}  (${f.tokens(inputTokens)} in · ${f.tokens(outputTokens)} out)`),
  );
  return frame.lines.join('\n');
}

/**
 * A line of the plain (non-TTY) output for an action, or `undefined` for none;
 * `view` (the state the action was applied to) names panel dispatches by label
 * and tells a sub-agent waiting for input from one the stream left unfinished.
 */
export function describeAction(action: ViewAction, c: Colors, width = 100, view?: ViewModel): string | undefined {
  switch (action.kind) {
    case 'tool': {
      const { invocation, delegation } = action;
      if (invocation.status === 'running') return undefined;
      const where = delegation ? `  ${c.magenta(f.fit(delegation.name, 40))} › ` : '';
      const detail = invocation.status === 'failed' ? (invocation.result ?? '') : briefArgs(invocation.args);
      return `${where}${f.icon(invocation, c, '')} ${f.fit(invocation.name, 40)} ${c.dim(f.fit(detail, width - 30))} ${c.dim(f.seconds(invocation))}`.trimEnd();
    }
    case 'subagent-end': {
      // Printed at the end, not the start: by then a placeholder name has been replaced.
      const name = f.fit(action.delegation.name, 40);
      const { description } = action.delegation;
      const waiting = (view?.delegation(action.delegation)?.tools.inState('awaiting-input') ?? 0) > 0;
      const mark = action.delegation.ended ? '■' : c.yellow(waiting ? '?' : '□');
      const state = action.delegation.ended ? '' : waiting ? ', awaiting input' : ', unfinished';
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
