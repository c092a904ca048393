// The figures by which the decode benchmark holds its hand-written tally
// (handTally.ts) to `summarize()`: numbers, strings and tables of counts.
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
