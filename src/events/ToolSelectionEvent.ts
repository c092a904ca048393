import * as t from 'io-ts';

/** The tool-selector middleware picked these tools. */
export const ToolSelectionEvent = t.type(
  { type: t.literal('tool_selection'), tools: t.array(t.string) },
  'ToolSelectionEvent',
);
export type ToolSelectionEvent = t.TypeOf<typeof ToolSelectionEvent>;
