import * as t from 'io-ts';

/** A sub-agent delegation completes. */
export const SubagentEndEvent = t.type({ type: t.literal('subagent_end'), name: t.string }, 'SubagentEndEvent');
export type SubagentEndEvent = t.TypeOf<typeof SubagentEndEvent>;
