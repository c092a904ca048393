import * as t from 'io-ts';

/**
 * A main-agent tool invocation. The producer re-sends a call with the same `id`
 * as its arguments complete; the latest `args` are the complete ones. `id` may be `""`.
 */
export const ToolCallEvent = t.type(
  { type: t.literal('tool_call'), name: t.string, args: t.UnknownRecord, id: t.string },
  'ToolCallEvent',
);
export type ToolCallEvent = t.TypeOf<typeof ToolCallEvent>;
