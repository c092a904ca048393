import * as t from 'io-ts';

/** Context summarization begins. */
export const SummarizationStartEvent = t.type(
  { type: t.literal('summarization_start') },
  'SummarizationStartEvent',
);
export type SummarizationStartEvent = t.TypeOf<typeof SummarizationStartEvent>;
