// The imperative side of the decode benchmark: what a client writes by hand
// to summarize a transcript, and the figures both it and `summarize()` give.
import type { RunSummary } from '../../operators/index.js';

/** What an invocation ended as, folded to what a hand-written tally can tell. */
type Ending = 'succeeded' | 'failed' | 'open';

/** The figures a summary of a run is compared by: each one a number, a string or a table of counts. */
export interface Figures {
  readonly outcome: string;
  readonly response: string | undefined;
  readonly text: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly events: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly errors: number;
  /** Invocations by tool name, then by how they ended. */
  readonly tools: Readonly<Record<string, Readonly<Record<Ending, number>>>>;
  readonly delegations: number;
  readonly panels: Readonly<Record<string, number>>;
}

function byName(invocations: Iterable<{ name: string; ending: Ending }>): Figures['tools'] {
  const tools: Record<string, Record<Ending, number>> = {};
  for (const { name, ending } of invocations) {
    const counts = (tools[name] ??= { succeeded: 0, failed: 0, open: 0 });
    counts[ending]++;
  }
  return tools;
}

function tallied(statuses: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** The figures of a `RunSummary`. */
export function figuresOf(summary: RunSummary): Figures {
  return {
    outcome: summary.outcome,
    response: summary.response,
    text: summary.text,
    ...summary.usage,
    events: summary.events,
    counts: summary.counts,
    errors: summary.errors.length,
    tools: byName(
      summary.invocations.map((i) => ({
        name: i.name,
        ending: i.status === 'succeeded' || i.status === 'failed' ? i.status : 'open',
      })),
    ),
    delegations: summary.delegations.length,
    panels: tallied(summary.panelDispatches.map((p) => p.status)),
  };
}

/** An event as `JSON.parse` gives it, read by hand: no codec, the fields a tally needs. */
interface Parsed {
  readonly type: string;
  readonly [field: string]: unknown;
}

/**
 * A summary written by hand: one object, one `switch` per event, counters and
 * maps, no library. Calls pair with results by id within their scope (the
 * main agent, or a sub-agent's instance).
 */
export class HandTally {
  private events = 0;
  private readonly counts: Record<string, number> = {};
  private readonly deltas: string[] = [];
  private inputTokens = 0;
  private outputTokens = 0;
  private response: string | undefined;
  private errors = 0;
  private waiting = false;
  private delegations = 0;
  private readonly invocations = new Map<string, { name: string; ending: Ending }>();
  private readonly panels = new Map<string, string>();

  push(event: Parsed): void {
    this.events++;
    this.counts[event.type] = (this.counts[event.type] ?? 0) + 1;
    switch (event.type) {
      case 'text':
        this.waiting = false;
        this.deltas.push(event['content'] as string);
        break;
      case 'usage_stats':
        this.inputTokens += event['input_tokens'] as number;
        this.outputTokens += event['output_tokens'] as number;
        break;
      case 'done':
        this.response = event['response'] as string;
        break;
      case 'error':
        this.errors++;
        break;
      case 'interrupt':
      case 'ask_user':
        this.waiting = true;
        break;
      case 'subagent_start':
        this.delegations++;
        break;
      case 'panel_dispatch_start':
        this.panels.set(event['id'] as string, 'unfinished');
        break;
      case 'panel_dispatch_complete':
        this.panels.set(event['id'] as string, 'completed');
        break;
      case 'panel_dispatch_error':
        this.panels.set(event['id'] as string, 'failed');
        break;
      case 'tool_call':
      case 'tool_result':
        this.waiting = false;
        this.tool(event, '');
        break;
      case 'subagent_tool_call':
      case 'subagent_tool_result':
        this.waiting = false;
        this.tool(event, `${String(event['instance_id'] || event['subagent'])}\0`);
        break;
    }
  }

  figures(): Figures {
    const outcome =
      this.errors > 0
        ? 'failed'
        : this.response === undefined
          ? 'incomplete'
          : this.waiting
            ? 'needs-input'
            : 'completed';
    return {
      outcome,
      response: this.response,
      text: this.deltas.join(''),
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      totalTokens: this.inputTokens + this.outputTokens,
      events: this.events,
      counts: this.counts,
      errors: this.errors,
      tools: byName(this.invocations.values()),
      delegations: this.delegations,
      panels: tallied(this.panels.values()),
    };
  }

  /** A call or a result, `scope` naming the sub-agent instance that made it (`''` for the main agent). */
  private tool(event: Parsed, scope: string): void {
    const key = scope + String(event['id']);
    const result = event.type.endsWith('_result');
    const known = this.invocations.get(key);
    const ending: Ending = result ? (event['success'] ? 'succeeded' : 'failed') : (known?.ending ?? 'open');
    if (known) known.ending = ending;
    else this.invocations.set(key, { name: event['name'] as string, ending });
  }
}
