import type { AskUserEvent } from '../src/events/AskUserEvent.js';
import type { InterruptEvent } from '../src/events/InterruptEvent.js';
import type { DelegationSummary } from './DelegationSummary.js';
import type { InvocationSummary } from './InvocationSummary.js';
import type { UsageTotals } from './UsageTotals.js';

/** Everything a run did, as `summarize` reports it at completion. */
export interface RunSummary {
  /** `done.response`, or `undefined` when the stream ended without `done`. */
  readonly response: string | undefined;
  /** The concatenated main-agent `text` deltas. */
  readonly text: string;
  readonly usage: UsageTotals;
  /** Every invocation in its final state, in the order first seen. */
  readonly invocations: readonly InvocationSummary[];
  /** Every delegation, in start order. */
  readonly delegations: readonly DelegationSummary[];
  /** The messages of `error` events. */
  readonly errors: readonly string[];
  readonly interrupts: readonly InterruptEvent[];
  readonly questions: readonly AskUserEvent[];
  /** Events seen, by `type` (unknown types included when kept). */
  readonly counts: Readonly<Record<string, number>>;
  readonly events: number;
}
