import * as t from 'io-ts';

/** The result of a sub-agent's tool call; older producers omit `id`. */
export const SubagentToolResultEvent = t.intersection(
  [
    t.type({
      type: t.literal('subagent_tool_result'),
      subagent: t.string,
      name: t.string,
      content: t.string,
      success: t.boolean,
    }),
    t.partial({ id: t.string }),
  ],
  'SubagentToolResultEvent',
);
export type SubagentToolResultEvent = t.TypeOf<typeof SubagentToolResultEvent>;
