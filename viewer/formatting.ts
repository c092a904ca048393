import type { Colors } from 'picocolors/types.js';
import type { RunSummary } from '../operators/RunSummary.js';
import type { ToolInvocation } from '../operators/ToolInvocation.js';

const number = new Intl.NumberFormat('en-US');

/** Helpers shared by the frame renderer and the plain line output. */
export const formatting = {
  /** Cuts plain text to `width` characters, on one line. */
  fit(text: string, width: number): string {
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  },

  /** The most telling argument of a call: its first string value. */
  brief(args: Readonly<Record<string, unknown>>): string {
    const first = Object.values(args).find((v): v is string => typeof v === 'string');
    return first ?? (Object.keys(args).length ? JSON.stringify(args) : '');
  },

  seconds(invocation: ToolInvocation): string {
    return invocation.endedAt === undefined ? '' : `${((invocation.endedAt - invocation.startedAt) / 1000).toFixed(1)}s`;
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
    }
  },

  tokens(n: number): string {
    return number.format(n);
  },

  /** `9 tool calls (1 failed) · 3 sub-agents · 23,456 tokens (… in · … out) · 164 events` */
  summaryLine(summary: RunSummary): string {
    const tools = summary.invocations.filter((i) => i.name !== 'task');
    const failed = tools.filter((i) => i.status === 'failed').length;
    const { inputTokens, outputTokens, totalTokens } = summary.usage;
    return [
      `${tools.length} tool calls${failed ? ` (${failed} failed)` : ''}`,
      `${summary.delegations.length} sub-agents`,
      `${number.format(totalTokens)} tokens (${number.format(inputTokens)} in · ${number.format(outputTokens)} out)`,
      `${summary.events} events`,
    ].join(' · ');
  },
};
