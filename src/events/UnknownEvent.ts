import * as t from 'io-ts';

/**
 * An event whose `type` this library does not know, passed on only with
 * `keepUnknown: true`. Its `type` is a string outside `EvoEventType`, so
 * narrowing on `type` still works for the known events.
 */
export const UnknownEvent = t.intersection([t.type({ type: t.string }), t.UnknownRecord], 'UnknownEvent');
export type UnknownEvent = t.TypeOf<typeof UnknownEvent>;
