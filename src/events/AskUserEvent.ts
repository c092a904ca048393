import * as t from 'io-ts';

/** A clarifying question from the agent (only with `--no-auto-mode`); `tool_call_id` may be `""`. */
export const AskUserEvent = t.type(
  {
    type: t.literal('ask_user'),
    interrupt_id: t.string,
    questions: t.array(t.unknown),
    tool_call_id: t.string,
  },
  'AskUserEvent',
);
export type AskUserEvent = t.TypeOf<typeof AskUserEvent>;
