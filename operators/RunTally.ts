import type {
  AskUserEvent,
  EvoEvent,
  EvoEventType,
  InterruptEvent,
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
  SubagentToolCallEvent,
  SubagentToolResultEvent,
  ToolCallEvent,
  ToolResultEvent,
  UnknownEvent,
} from '../src/events.js';
import type { Delegation } from './delegations.js';
import { DelegationTracker } from './DelegationTracker.js';
import { PanelBook } from './PanelBook.js';
import type { DelegationSummary, InvocationSummary, RunOutcome, RunSummary } from './summaryTypes.js';
import type { UsageTotals } from './sumUsage.js';
import { TextRope } from './TextRope.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

const NO_GATES: readonly (InterruptEvent | AskUserEvent)[] = [];

/** A count of one event type; the tally holds the hot types' counters in fields. */
interface Counter {
  n: number;
}

/**
 * What a `RunTally` tells as it pairs and groups: how `traceRun` follows a
 * run from the tally `summarize()` keeps anyway, instead of pairing and
 * grouping every event a second time. Called while the tally takes the event
 * (or, for what is still open, when it finishes).
 */
export interface TallyListener {
  /** A new snapshot of an invocation; `event` is what made it (none when the run ended), `delegation` the sub-agent it ran in. */
  invocation(invocation: ToolInvocation, event: EvoEvent | undefined, delegation: Delegation | undefined): void;
  delegationStarted(delegation: Delegation): void;
  delegationEnded(delegation: Delegation): void;
  panelStarted(event: PanelDispatchStartEvent): void;
  panelEnded(event: PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void;
}

/**
 * What a run has shown so far, for `summarize`: one per subscription, fed
 * every event, asked for the `RunSummary` at the end. A plain class, testable
 * without Rx; it pairs and groups through the same trackers as
 * `pairToolCalls` and `groupSubagents`, and tells a `TallyListener` what they
 * find.
 *
 * Each event costs one `switch`: the hot types (text deltas are most of a
 * run) are counted in fields, the rest by name in a map.
 */
export class RunTally {
  private events = 0;
  /** Counters by wire type, in first-seen order: what `counts` is built from. */
  private readonly counts = new Map<string, Counter>();
  private textCount: Counter | undefined;
  private thinkingCount: Counter | undefined;
  private subagentTextCount: Counter | undefined;
  private readonly text = new TextRope();
  private inputTokens = 0;
  private outputTokens = 0;
  private done: string | undefined;
  private readonly errors: string[] = [];
  private readonly interrupts: InterruptEvent[] = [];
  private readonly questions: AskUserEvent[] = [];
  /** The approvals and questions since the run last went on; replaced, never changed in place. */
  private gates: readonly (InterruptEvent | AskUserEvent)[] = NO_GATES;
  /**
   * An invocation's slot is taken when it opens, to keep first-seen order; its
   * summary is built once, when it closes: while open, the tracker holds it.
   */
  private readonly invocations = new Map<string, InvocationSummary | undefined>();
  private readonly tools: ToolCallTracker;
  private readonly delegations: Delegation[] = [];
  /** The delegation the event being taken went to. */
  private owner: Delegation | undefined;
  private readonly subagents = new DelegationTracker({
    start: (delegation) => {
      if (this.whole) this.delegations.push(delegation);
      this.listener?.delegationStarted(delegation);
    },
    event: (delegation) => (this.owner = delegation),
    end: (delegation) => this.listener?.delegationEnded(delegation),
  });
  private readonly panels = new PanelBook();
  private finished = false;
  private listener: TallyListener | undefined;

  /** Whether it keeps what grows with the run, for `summary`: the text, and every invocation, delegation and panel dispatch. */
  private readonly whole: boolean;

  /**
   * `summary: false`: a tally that only follows the run for a listener and
   * its outcome, as a trace without `summarize()` keeps one; its memory is
   * the trackers' (what is open) and the questions pending, and its `summary`
   * has counts, usage, outcome and the first error, but no text and no other lists.
   */
  constructor(now: () => number, options: { readonly summary?: boolean } = {}) {
    this.tools = new ToolCallTracker(now);
    this.whole = options.summary ?? true;
  }

  /** Tells `listener` what the tally finds from now on (one listener: a later one replaces it). */
  listen(listener: TallyListener): void {
    this.listener = listener;
  }

  /** Takes one event into account; returns itself, for `reduce`. */
  push(event: EvoEvent | UnknownEvent): this {
    this.events++;
    switch (event.type) {
      case 'text':
        (this.textCount ??= this.counter('text')).n++;
        this.gates = NO_GATES;
        if (this.whole) this.text.push(event.content);
        return this;
      case 'subagent_text':
        (this.subagentTextCount ??= this.counter('subagent_text')).n++;
        this.owner = undefined;
        this.subagents.take(event);
        return this;
      case 'thinking':
        (this.thinkingCount ??= this.counter('thinking')).n++;
        return this;
      case 'unknown':
        this.count(event.wireType);
        return this;
      default:
        this.count(event.type);
        this.other(event);
        return this;
    }
  }

  /** The main agent's token totals so far. */
  get usage(): UsageTotals {
    const { inputTokens, outputTokens } = this;
    return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  }

  /** `done.response`, once it has arrived. */
  get response(): string | undefined {
    return this.done;
  }

  /** The message of the first `error` event. */
  get firstError(): string | undefined {
    return this.errors[0];
  }

  /** How the run ended, if it ended now. */
  outcome(): RunOutcome {
    return outcomeOf(this.errors.length > 0, this.done !== undefined, this.gates.length > 0);
  }

  /**
   * Closes what is still open: invocations (`awaiting-input` if the run asked
   * about them, else `unfinished`) and delegations. Once: `summary` calls it
   * too, and whoever calls it first sets the end.
   */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    const open = this.tools.finish();
    // Kept before the listener is told: a listener that throws leaves the summary whole.
    if (this.whole) for (const snapshot of open) this.keep(snapshot);
    try {
      for (const snapshot of open) this.listener?.invocation(snapshot, undefined, undefined);
    } finally {
      this.subagents.finish();
    }
  }

  summary(): RunSummary {
    this.finish();
    return {
      outcome: this.outcome(),
      // Left out, not `undefined`, when the stream ended without `done`.
      ...(this.done !== undefined && { response: this.done }),
      text: this.text.joined(this.done),
      usage: this.usage,
      invocations: [...this.invocations.values()].filter((i): i is InvocationSummary => i !== undefined),
      delegations: this.delegations.map(delegationSummary),
      panelDispatches: this.panels.list(),
      errors: this.errors,
      interrupts: this.interrupts,
      questions: this.questions,
      pendingApprovals: this.gates.filter((g): g is InterruptEvent => g.type === 'interrupt'),
      pendingQuestions: this.gates.filter((g): g is AskUserEvent => g.type === 'ask_user'),
      counts: Object.fromEntries([...this.counts].map(([type, { n }]) => [type, n])),
      events: this.events,
    };
  }

  /** The known types other than the hot ones. */
  private other(event: EvoEvent): void {
    switch (event.type) {
      case 'usage_stats':
        this.inputTokens += event.input_tokens;
        this.outputTokens += event.output_tokens;
        return;
      case 'done':
        this.done = event.response;
        return;
      case 'error':
        // Without a summary, the first is all the outcome and the trace use.
        if (this.whole || this.errors.length === 0) this.errors.push(event.message);
        return;
      case 'interrupt':
      case 'ask_user':
        return this.gate(event);
      case 'tool_call':
      case 'tool_result':
      case 'subagent_tool_call':
      case 'subagent_tool_result':
        // A call after a question is the run going on: it was answered.
        this.gates = NO_GATES;
        return this.tool(event);
      case 'subagent_start':
      case 'subagent_end':
        this.tools.take(event);
        this.subagents.take(event);
        return;
      case 'panel_dispatch_start':
      case 'panel_dispatch_complete':
      case 'panel_dispatch_error':
        return this.panel(event);
      default:
        return;
    }
  }

  /** A new counter for `type`, in first-seen order. */
  private counter(type: EvoEventType): Counter {
    const counter = { n: 0 };
    this.counts.set(type, counter);
    return counter;
  }

  private count(type: string): void {
    const counter = this.counts.get(type);
    if (counter === undefined) this.counts.set(type, { n: 1 });
    else counter.n++;
  }

  private gate(event: InterruptEvent | AskUserEvent): void {
    // Every question of the run only for a summary; the pending ones (`gates`) for the outcome too.
    if (this.whole) {
      if (event.type === 'interrupt') this.interrupts.push(event);
      else this.questions.push(event);
    }
    this.gates = [...this.gates, event];
    this.tools.take(event);
  }

  /** Grouped first: a sub-agent's call belongs to a delegation that may start with it. */
  private tool(event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent): void {
    this.owner = undefined;
    this.subagents.take(event);
    const snapshot = this.tools.take(event);
    if (snapshot === undefined) return;
    if (this.whole) this.keep(snapshot);
    this.listener?.invocation(snapshot, event, this.owner);
  }

  private panel(event: PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void {
    if (this.whole) this.panels.take(event);
    if (event.type === 'panel_dispatch_start') this.listener?.panelStarted(event);
    else this.listener?.panelEnded(event);
  }

  private keep(i: ToolInvocation): void {
    if (i.status === 'running') {
      if (!this.invocations.has(i.key)) this.invocations.set(i.key, undefined);
      return;
    }
    this.invocations.set(i.key, invocationSummary(i));
  }
}

/** An object whose keys are added one at a time: only those with a value. */
type Draft<T> = { -readonly [K in keyof T]?: T[K] };

/**
 * A closed invocation as a `RunSummary` keeps it: its final state, the
 * result only when it failed. Fields it does not have are left out, not set
 * to `undefined`, so that a summary equals the object a test writes; one
 * literal per kind of scope, as the tracker makes its snapshots (one per call).
 */
export function invocationSummary(i: ToolInvocation): InvocationSummary {
  const { key, id, name, args, subagent, instanceId, status, startedAt, endedAt } = i;
  // A closed invocation has ended; the check only keeps the types whole.
  if (endedAt === undefined) return withError({ key, id, name, args, ...scopeFieldsOf(i), status, startedAt }, i);
  if (subagent === undefined) return withError({ key, id, name, args, status, startedAt, endedAt }, i);
  if (instanceId === undefined) return withError({ key, id, name, args, subagent, status, startedAt, endedAt }, i);
  return withError({ key, id, name, args, subagent, instanceId, status, startedAt, endedAt }, i);
}

/** A failed invocation's summary says what went wrong: the result's content. */
function withError(summary: Draft<InvocationSummary>, i: ToolInvocation): InvocationSummary {
  if (i.status === 'failed' && i.result !== undefined) summary.error = i.result;
  return summary as InvocationSummary;
}

/** The sub-agent fields an invocation has, for the summary that cannot be one literal. */
function scopeFieldsOf({ subagent, instanceId }: ToolInvocation): Pick<InvocationSummary, 'subagent' | 'instanceId'> {
  if (subagent === undefined) return {};
  return instanceId === undefined ? { subagent } : { subagent, instanceId };
}

/** A delegation as a `RunSummary` keeps it, without the ids and type the stream did not give. */
function delegationSummary(d: Delegation): DelegationSummary {
  const summary: Draft<DelegationSummary> = { key: d.key };
  if (d.instanceId !== undefined) summary.instanceId = d.instanceId;
  summary.name = d.name;
  if (d.subagentType !== undefined) summary.subagentType = d.subagentType;
  summary.description = d.description;
  if (d.taskCallId !== undefined) summary.taskCallId = d.taskCallId;
  summary.events = d.events;
  summary.ended = d.ended;
  return summary as DelegationSummary;
}

/** The rule of `RunOutcome`: an `error` event fails a run, no `done` leaves it incomplete, a question nothing went past needs input. */
function outcomeOf(failed: boolean, done: boolean, waiting: boolean): RunOutcome {
  if (failed) return 'failed';
  if (!done) return 'incomplete';
  return waiting ? 'needs-input' : 'completed';
}
