import * as t from 'io-ts';

/** Context summarization output. */
export const SummarizationEvent = t.type(
  { type: t.literal('summarization'), content: t.string },
  'SummarizationEvent',
);
export type SummarizationEvent = t.TypeOf<typeof SummarizationEvent>;
