import * as t from 'io-ts';

/** A streamed delta of the main agent's text; concatenate them for the running message. */
export const TextEvent = t.type({ type: t.literal('text'), content: t.string }, 'TextEvent');
export type TextEvent = t.TypeOf<typeof TextEvent>;
