import * as t from 'io-ts';

/** Text from a sub-agent; `instance_id` tells same-name sub-agents apart where the producer sends it. */
export const SubagentTextEvent = t.intersection(
  [
    t.type({ type: t.literal('subagent_text'), subagent: t.string, content: t.string }),
    t.partial({ instance_id: t.union([t.string, t.number]) }),
  ],
  'SubagentTextEvent',
);
export type SubagentTextEvent = t.TypeOf<typeof SubagentTextEvent>;
