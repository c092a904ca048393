import * as t from 'io-ts';

/** The end of the stream; `response` is the authoritative final text. */
export const DoneEvent = t.type(
  { type: t.literal('done'), content: t.string, response: t.string },
  'DoneEvent',
);
export type DoneEvent = t.TypeOf<typeof DoneEvent>;
