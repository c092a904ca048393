import * as t from 'io-ts';

/** An error reported by the producer during the run. */
export const ErrorEvent = t.type({ type: t.literal('error'), message: t.string }, 'ErrorEvent');
export type ErrorEvent = t.TypeOf<typeof ErrorEvent>;
