import * as t from 'io-ts';

/** Token usage of one main-agent model call; a run sends many, to be summed. */
export const UsageStatsEvent = t.type(
  { type: t.literal('usage_stats'), input_tokens: t.number, output_tokens: t.number },
  'UsageStatsEvent',
);
export type UsageStatsEvent = t.TypeOf<typeof UsageStatsEvent>;
