/** Token usage summed over a run's `usage_stats` events. */
export interface UsageTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}
