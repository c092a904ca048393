import * as t from 'io-ts';

/** A sub-agent delegation begins; may be sent again with the real name replacing a placeholder. */
export const SubagentStartEvent = t.type(
  { type: t.literal('subagent_start'), name: t.string, description: t.string },
  'SubagentStartEvent',
);
export type SubagentStartEvent = t.TypeOf<typeof SubagentStartEvent>;
