import * as t from 'io-ts';

/** A human-in-the-loop approval request (only with `--no-auto-mode`); `review_configs` is `[]` when none. */
export const InterruptEvent = t.type(
  {
    type: t.literal('interrupt'),
    interrupt_id: t.string,
    action_requests: t.array(t.unknown),
    review_configs: t.array(t.unknown),
  },
  'InterruptEvent',
);
export type InterruptEvent = t.TypeOf<typeof InterruptEvent>;
