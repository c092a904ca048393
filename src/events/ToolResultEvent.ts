import * as t from 'io-ts';

/** The result of a main-agent tool call; older producers omit `id`. */
export const ToolResultEvent = t.intersection(
  [
    t.type({ type: t.literal('tool_result'), name: t.string, content: t.string, success: t.boolean }),
    t.partial({ id: t.string }),
  ],
  'ToolResultEvent',
);
export type ToolResultEvent = t.TypeOf<typeof ToolResultEvent>;
