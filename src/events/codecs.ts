import * as t from 'io-ts';

// Every codec of the stream-json protocol. Each event is the JSON object as
// sent: wire field names, unknown fields kept. Fields that older or other
// producers leave out are optional (`t.partial`).

/** Model reasoning text. Older producers send `id` as an integer, usually `0`. */
export const ThinkingEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('thinking'),
      /** The reasoning text. */
      content: t.string,
    }),
    t.partial({
      /** A string, or an integer from older producers. */
      id: t.union([t.string, t.number]),
    }),
  ],
  'ThinkingEvent',
);
export type ThinkingEvent = t.TypeOf<typeof ThinkingEvent>;

/** A streamed delta of the main agent's text; concatenate them for the running message. */
export const TextEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('text'),
    /** This delta only, not the message so far. */
    content: t.string,
  },
  'TextEvent',
);
export type TextEvent = t.TypeOf<typeof TextEvent>;

/**
 * A main-agent tool invocation. 0.2.x sends each call once, with its complete
 * `args`; other producers may send a call again with the same `id`, the latest
 * `args` winning. `id` may be `""`. Non-finite float arguments arrive as bare
 * `NaN`/`Infinity` tokens and decode to those numbers.
 */
export const ToolCallEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('tool_call'),
    /** The tool called. */
    name: t.string,
    /** Its arguments as the model wrote them; a later call with the same `id` replaces them. */
    args: t.UnknownRecord,
    /** Matches the `id` of its `tool_result`; may be `""`. */
    id: t.string,
  },
  'ToolCallEvent',
);
export type ToolCallEvent = t.TypeOf<typeof ToolCallEvent>;

/** The result of a main-agent tool call; older producers omit `id`. */
export const ToolResultEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('tool_result'),
      /** The tool that ran. */
      name: t.string,
      /** Its output, as text. */
      content: t.string,
      /** `false` when the tool failed; `content` then says why. */
      success: t.boolean,
    }),
    t.partial({
      /** The `id` of the `tool_call` it answers. */
      id: t.string,
    }),
  ],
  'ToolResultEvent',
);
export type ToolResultEvent = t.TypeOf<typeof ToolResultEvent>;

/**
 * A sub-agent delegation begins. Since 0.2.x: `instance_id` names this
 * delegation on every event of it, and `tool_call_id` the `task` call that
 * started it (whose `args` hold `subagent_type` and `description`; the
 * event's own `description` is then `""`). Older producers send neither.
 */
export const SubagentStartEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('subagent_start'),
      /** The sub-agent's name; several delegations may share it. */
      name: t.string,
      /** The task given; `""` since 0.2.x, which puts it in the `task` call's `args`. */
      description: t.string,
    }),
    t.partial({
      /** Names this delegation on each of its events (0.2.x). */
      instance_id: t.string,
      /** The `id` of the `task` call that started it (0.2.x). */
      tool_call_id: t.string,
    }),
  ],
  'SubagentStartEvent',
);
export type SubagentStartEvent = t.TypeOf<typeof SubagentStartEvent>;

/**
 * A tool call made inside a sub-agent. Its `id` is the provider's, unique
 * only within its `instance_id`: two sub-agents can both send `call_0`.
 */
export const SubagentToolCallEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('subagent_tool_call'),
      /** The name of the sub-agent calling. */
      subagent: t.string,
      /** The tool called. */
      name: t.string,
      /** Its arguments as the model wrote them. */
      args: t.UnknownRecord,
      /** Matches the `id` of its `subagent_tool_result`, within the same `instance_id`. */
      id: t.string,
    }),
    t.partial({
      /** The delegation it belongs to, as its `subagent_start` named it. */
      instance_id: t.string,
    }),
  ],
  'SubagentToolCallEvent',
);
export type SubagentToolCallEvent = t.TypeOf<typeof SubagentToolCallEvent>;

/** The result of a sub-agent's tool call; older producers omit `id`. */
export const SubagentToolResultEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('subagent_tool_result'),
      /** The name of the sub-agent that called. */
      subagent: t.string,
      /** The tool that ran. */
      name: t.string,
      /** Its output, as text. */
      content: t.string,
      /** `false` when the tool failed; `content` then says why. */
      success: t.boolean,
    }),
    t.partial({
      /** The `id` of the `subagent_tool_call` it answers. */
      id: t.string,
      /** The delegation it belongs to, as its `subagent_start` named it. */
      instance_id: t.string,
    }),
  ],
  'SubagentToolResultEvent',
);
export type SubagentToolResultEvent = t.TypeOf<typeof SubagentToolResultEvent>;

/** Text from a sub-agent; `instance_id` tells same-name sub-agents apart where the producer sends it. */
export const SubagentTextEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('subagent_text'),
      /** The name of the sub-agent writing. */
      subagent: t.string,
      /** The text. */
      content: t.string,
    }),
    t.partial({
      /** The delegation it belongs to; some producers send a number. */
      instance_id: t.union([t.string, t.number]),
    }),
  ],
  'SubagentTextEvent',
);
export type SubagentTextEvent = t.TypeOf<typeof SubagentTextEvent>;

/** A sub-agent delegation completes; it may come before or after its `task` call's result, or after an `error`. */
export const SubagentEndEvent = t.intersection(
  [
    t.type({
      /** Discriminant of this event. */
      type: t.literal('subagent_end'),
      /** The sub-agent's name, as its `subagent_start` gave it. */
      name: t.string,
    }),
    t.partial({
      /** The delegation that ended, as its `subagent_start` named it. */
      instance_id: t.string,
    }),
  ],
  'SubagentEndEvent',
);
export type SubagentEndEvent = t.TypeOf<typeof SubagentEndEvent>;

/** The tool-selector middleware picked these tools. */
export const ToolSelectionEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('tool_selection'),
    /** The names of the tools picked. */
    tools: t.array(t.string),
  },
  'ToolSelectionEvent',
);
export type ToolSelectionEvent = t.TypeOf<typeof ToolSelectionEvent>;

/** Context summarization begins. */
export const SummarizationStartEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('summarization_start'),
  },
  'SummarizationStartEvent',
);
export type SummarizationStartEvent = t.TypeOf<typeof SummarizationStartEvent>;

/** Context summarization output. */
export const SummarizationEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('summarization'),
    /** The summary that replaces the earlier context. */
    content: t.string,
  },
  'SummarizationEvent',
);
export type SummarizationEvent = t.TypeOf<typeof SummarizationEvent>;

/** A number of tokens: finite and not negative, or a sum of them would be meaningless. */
const isTokenCount = (u: unknown): u is number => typeof u === 'number' && Number.isFinite(u) && u >= 0;
/** The codec of a token count in `usage_stats`: a finite number, not negative. */
export const TokenCount: t.Type<number, number, unknown> = new t.Type<number, number, unknown>(
  'TokenCount',
  isTokenCount,
  (u, context) => (isTokenCount(u) ? t.success(u) : t.failure(u, context)),
  t.identity,
);

/**
 * Token usage of one main-agent model call; a run sends many, to be summed.
 * Sub-agents spend tokens that no event reports: a sum is the main agent's.
 * A negative or non-finite count (`1e400` parses as `Infinity`) makes the line
 * a diagnostic, not a total.
 */
export const UsageStatsEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('usage_stats'),
    /** Tokens the model call read. */
    input_tokens: TokenCount,
    /** Tokens the model call wrote. */
    output_tokens: TokenCount,
  },
  'UsageStatsEvent',
);
export type UsageStatsEvent = t.TypeOf<typeof UsageStatsEvent>;

/** A tool call waiting for approval, in an `interrupt`. */
export const ActionRequest = t.intersection(
  [
    t.type({
      /** The tool to be called. */
      name: t.string,
    }),
    t.partial({
      /** The arguments it would be called with. */
      args: t.UnknownRecord,
      /** What the producer tells the reviewer about it. */
      description: t.string,
    }),
  ],
  'ActionRequest',
);
export type ActionRequest = t.TypeOf<typeof ActionRequest>;

/** What a reviewer may answer to the action of that name: `approve`, `edit`, `reject`. */
export const ReviewConfig = t.partial(
  {
    /** The tool this applies to, as an `ActionRequest`'s `name`. */
    action_name: t.string,
    /** The answers allowed, such as `approve`, `edit`, `reject`. */
    allowed_decisions: t.array(t.string),
  },
  'ReviewConfig',
);
export type ReviewConfig = t.TypeOf<typeof ReviewConfig>;

/**
 * A human-in-the-loop approval request (only with `--no-auto-mode`): the run
 * stops after it. It may come from the main agent or from inside a sub-agent,
 * and says neither: its `action_requests` (tool name and args) match the
 * paused call. A run with `resume` sends a new message in the same thread; it
 * does not answer the paused call, which never gets its result. `interrupt_id`
 * is `"default"` when the producer has none; `review_configs` is `[]` when none.
 */
export const InterruptEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('interrupt'),
    /** The producer's id of the pause, or `"default"`. */
    interrupt_id: t.string,
    /** The tool calls waiting for approval. */
    action_requests: t.array(ActionRequest),
    /** What may be answered to each action; `[]` when the producer says nothing. */
    review_configs: t.array(ReviewConfig),
  },
  'InterruptEvent',
);
export type InterruptEvent = t.TypeOf<typeof InterruptEvent>;

/** One question of an `ask_user`: free text, or one of `choices` for `type: "multiple_choice"`. */
export const AskUserQuestion = t.intersection(
  [
    t.type({
      /** The text of the question. */
      question: t.string,
    }),
    t.partial({
      /** `"text"` or `"multiple_choice"` as 0.2.x sends; kept as a string so that a new kind is not a bad line. */
      type: t.string,
      /** The options of a `multiple_choice` question; other fields of each are kept. */
      choices: t.array(
        t.intersection([
          t.type({
            /** The option's text. */
            value: t.string,
          }),
          t.UnknownRecord,
        ]),
      ),
      /** Whether the question must be answered. */
      required: t.boolean,
    }),
  ],
  'AskUserQuestion',
);
export type AskUserQuestion = t.TypeOf<typeof AskUserQuestion>;

/**
 * Clarifying questions from the agent (only with `--no-auto-mode`): the run
 * stops after it. A run with `resume` sends a new message in the same thread,
 * which the agent reads as a new request, not as the answer. `tool_call_id` is
 * the `ask_user` call left open, and may be `""`.
 */
export const AskUserEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('ask_user'),
    /** The producer's id of the pause. */
    interrupt_id: t.string,
    /** The questions, in the order asked. */
    questions: t.array(AskUserQuestion),
    /** The `ask_user` call left open; may be `""`. */
    tool_call_id: t.string,
  },
  'AskUserEvent',
);
export type AskUserEvent = t.TypeOf<typeof AskUserEvent>;

/**
 * A sub-agent task started from inside code (a `code_interpreter` call, whose
 * id is `eval_id`, possibly `""`), rather than by a `task` tool call. 0.2.6+.
 */
export const PanelDispatchStartEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('panel_dispatch_start'),
    /** The `code_interpreter` call it runs inside; may be `""`. */
    eval_id: t.string,
    /** The dispatch's id, which its `panel_dispatch_complete` or `panel_dispatch_error` repeats. */
    id: t.string,
    /** The sub-agent type it dispatches to. */
    subagent_type: t.string,
    /** Its label, as the code named it. */
    label: t.string,
    /** What it is asked to do. */
    description: t.string,
  },
  'PanelDispatchStartEvent',
);
export type PanelDispatchStartEvent = t.TypeOf<typeof PanelDispatchStartEvent>;

/** A panel dispatch finished, after `duration_ms`. */
export const PanelDispatchCompleteEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('panel_dispatch_complete'),
    /** The `code_interpreter` call it ran inside; may be `""`. */
    eval_id: t.string,
    /** The dispatch's id, as its `panel_dispatch_start` gave it. */
    id: t.string,
    /** How long it ran, in milliseconds. */
    duration_ms: t.number,
  },
  'PanelDispatchCompleteEvent',
);
export type PanelDispatchCompleteEvent = t.TypeOf<typeof PanelDispatchCompleteEvent>;

/** A panel dispatch failed with `error`, after `duration_ms`. */
export const PanelDispatchErrorEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('panel_dispatch_error'),
    /** The `code_interpreter` call it ran inside; may be `""`. */
    eval_id: t.string,
    /** The dispatch's id, as its `panel_dispatch_start` gave it. */
    id: t.string,
    /** How long it ran before failing, in milliseconds. */
    duration_ms: t.number,
    /** Why it failed. */
    error: t.string,
  },
  'PanelDispatchErrorEvent',
);
export type PanelDispatchErrorEvent = t.TypeOf<typeof PanelDispatchErrorEvent>;

/** An error reported by the producer during the run. */
export const ErrorEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('error'),
    /** What went wrong, as the producer says it. */
    message: t.string,
  },
  'ErrorEvent',
);
export type ErrorEvent = t.TypeOf<typeof ErrorEvent>;

/**
 * The end of the stream. `response` (equal to `content`) is every main-agent
 * `text` delta of the run joined with no separator: the agent's narration
 * between tool calls followed by its last words, not a separate final answer,
 * and nothing of what sub-agents wrote.
 */
export const DoneEvent = t.type(
  {
    /** Discriminant of this event. */
    type: t.literal('done'),
    /** The same text as `response`. */
    content: t.string,
    /** Every main-agent `text` delta of the run, joined. */
    response: t.string,
  },
  'DoneEvent',
);
export type DoneEvent = t.TypeOf<typeof DoneEvent>;

/** Every event of the stream-json protocol; narrows on `type`. */
export const EvoEvent = t.union(
  [
    ThinkingEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    SubagentStartEvent,
    SubagentToolCallEvent,
    SubagentToolResultEvent,
    SubagentTextEvent,
    SubagentEndEvent,
    PanelDispatchStartEvent,
    PanelDispatchCompleteEvent,
    PanelDispatchErrorEvent,
    ToolSelectionEvent,
    SummarizationStartEvent,
    SummarizationEvent,
    UsageStatsEvent,
    InterruptEvent,
    AskUserEvent,
    ErrorEvent,
    DoneEvent,
  ],
  'EvoEvent',
);
export type EvoEvent = t.TypeOf<typeof EvoEvent>;

/** The `type` of a known event: `'thinking' | 'text' | … | 'done'`. */
export type EvoEventType = EvoEvent['type'];

/**
 * The codec of each known event, by `type`. Decoding dispatches on `type`
 * through this table instead of trying every member of the `EvoEvent` union,
 * and a wrong shape is then reported against the one codec it was meant for.
 */
export const eventCodecs: {
  readonly [K in EvoEventType]: t.Type<
    Extract<
      EvoEvent,
      {
        /** The event's discriminant, the table's key. */
        type: K;
      }
    >,
    unknown,
    unknown
  >;
} = Object.freeze(
  Object.assign(Object.create(null) as object, {
    thinking: ThinkingEvent,
    text: TextEvent,
    tool_call: ToolCallEvent,
    tool_result: ToolResultEvent,
    subagent_start: SubagentStartEvent,
    subagent_tool_call: SubagentToolCallEvent,
    subagent_tool_result: SubagentToolResultEvent,
    subagent_text: SubagentTextEvent,
    subagent_end: SubagentEndEvent,
    panel_dispatch_start: PanelDispatchStartEvent,
    panel_dispatch_complete: PanelDispatchCompleteEvent,
    panel_dispatch_error: PanelDispatchErrorEvent,
    tool_selection: ToolSelectionEvent,
    summarization_start: SummarizationStartEvent,
    summarization: SummarizationEvent,
    usage_stats: UsageStatsEvent,
    interrupt: InterruptEvent,
    ask_user: AskUserEvent,
    error: ErrorEvent,
    done: DoneEvent,
  }),
);

/**
 * An event whose `type` this library does not know, passed on only with
 * `keepUnknown: true`. It is tagged `type: 'unknown'`, with the wire object
 * as sent in `event` (its own `type` also in `wireType`), so that comparing
 * `type` with a known literal narrows `EvoEvent | UnknownEvent` as it does
 * `EvoEvent`. `toJsonl` writes `event` back as it was.
 */
export const UnknownEvent = t.type(
  {
    /** Tags it apart from every known event. */
    type: t.literal('unknown'),
    /** The `type` the wire object carries. */
    wireType: t.string,
    /** The wire object, as sent. */
    event: t.intersection([
      t.type({
        /** The wire `type`, one this library does not know. */
        type: t.string,
      }),
      t.UnknownRecord,
    ]),
  },
  'UnknownEvent',
);
export type UnknownEvent = t.TypeOf<typeof UnknownEvent>;

/** A kept event of a type this library does not know, from its wire object. */
export function unknownEvent(event: UnknownEvent['event']): UnknownEvent {
  return { type: 'unknown', wireType: event.type, event };
}

/** Whether an event is of a type this library knows; narrows `EvoEvent | UnknownEvent` to `EvoEvent`. */
export function isKnownEvent(event: EvoEvent | UnknownEvent): event is EvoEvent {
  return event.type !== 'unknown';
}
