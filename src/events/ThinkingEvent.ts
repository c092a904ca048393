import * as t from 'io-ts';

/** Model reasoning text. Older producers send `id` as an integer, usually `0`. */
export const ThinkingEvent = t.intersection(
  [
    t.type({ type: t.literal('thinking'), content: t.string }),
    t.partial({ id: t.union([t.string, t.number]) }),
  ],
  'ThinkingEvent',
);
export type ThinkingEvent = t.TypeOf<typeof ThinkingEvent>;
