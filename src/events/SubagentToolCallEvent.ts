import * as t from 'io-ts';

/** A tool call made inside a sub-agent; re-sent like `tool_call`. `id` may be `""`. */
export const SubagentToolCallEvent = t.type(
  {
    type: t.literal('subagent_tool_call'),
    subagent: t.string,
    name: t.string,
    args: t.UnknownRecord,
    id: t.string,
  },
  'SubagentToolCallEvent',
);
export type SubagentToolCallEvent = t.TypeOf<typeof SubagentToolCallEvent>;
