import { defaultIfEmpty, filter, scan, type OperatorFunction } from 'rxjs';
import type { EvoEvent, UnknownEvent, UsageStatsEvent } from '../src/events/codecs.js';

/**
 * The main agent's token usage, summed over a run's `usage_stats` events.
 * Sub-agents spend tokens that no event reports, so this is not the run's
 * whole spend: name it "main-agent tokens" where people read it.
 */
export interface UsageTotals {
  /** The sum of `input_tokens`. */
  readonly inputTokens: number;
  /** The sum of `output_tokens`. */
  readonly outputTokens: number;
  /** Input and output tokens together. */
  readonly totalTokens: number;
}

const NO_USAGE: UsageTotals = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

/**
 * The main agent's running token totals, emitted after each `usage_stats`
 * event (one per main-agent model call); zero totals at completion for a run
 * without any. Sub-agents' tokens are in no event and so in no total.
 *
 * ```ts
 * run$.pipe(sumUsage()).subscribe(({ totalTokens }) => (counter.textContent = `${totalTokens} main-agent tokens`));
 * ```
 *
 * ```
 * source:     --u(10,2)--t--u(5,1)--|
 * sumUsage(): --a-----------b-------|     a: {10, 2, 12}, b: {15, 3, 18}
 * source:     --t--|
 * sumUsage(): -----(z|)                   z: {0, 0, 0}
 * ```
 */
export function sumUsage(): OperatorFunction<EvoEvent | UnknownEvent, UsageTotals> {
  return (source) =>
    source.pipe(
      filter((event): event is UsageStatsEvent => event.type === 'usage_stats'),
      scan<UsageStatsEvent, UsageTotals>(
        (sum, { input_tokens, output_tokens }) => ({
          inputTokens: sum.inputTokens + input_tokens,
          outputTokens: sum.outputTokens + output_tokens,
          totalTokens: sum.totalTokens + input_tokens + output_tokens,
        }),
        NO_USAGE,
      ),
      // A run without usage reports zero totals, so that `last()` has a value.
      defaultIfEmpty(NO_USAGE),
    );
}
