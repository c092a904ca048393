import type {
  AskUserEvent,
  EvoEvent,
  EvoEventType,
  InterruptEvent,
  SubagentToolCallEvent,
  SubagentToolResultEvent,
  ToolCallEvent,
  ToolResultEvent,
  UnknownEvent,
} from '../src/events/codecs.js';
import { CallOwners } from './CallOwners.js';
import { ChangeListeners } from './ChangeListeners.js';
import type { Delegation } from './delegations.js';
import { DelegationTracker } from './DelegationTracker.js';
import { PanelBook } from './PanelBook.js';
import type { ListenOptions, PanelDispatchEvent, RunChange, RunListener } from './runChange.js';
import { SummaryBook } from './SummaryBook.js';
import type { RunOutcome, RunSummary } from './summaryTypes.js';
import type { UsageTotals } from './sumUsage.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

const NO_GATES: readonly (InterruptEvent | AskUserEvent)[] = [];

/** A count of one event type; the model holds the hot types' counters in fields. */
interface Counter {
  n: number;
}

/**
 * The state of one run, event by event: its invocations (paired as
 * `pairToolCalls` pairs them), its delegations (grouped as `groupSubagents`
 * groups them), its panel dispatches, the questions it is waiting on, its
 * usage, its end; and a `RunChange` for each thing that changed, told to its
 * listeners. `viewActions()` maps the changes, `traceRun()` makes spans of
 * them, and `summarize()` gives the model's `summary()`: one pass over each
 * event serves all of them. A plain class, testable without Rx.
 *
 * Made with `{ summary: true }`, it also keeps what its `summary()` needs;
 * else it keeps only what is open, what is pending and counters. Each event
 * costs one `switch`, and no change record is made that no one hears.
 *
 * ```ts
 * const model = new RunModel(Date.now);
 * model.listen((change) => change.kind === 'invocation' && console.log(change.invocation.status));
 * for (const event of events) model.push(event);
 * model.finish();
 * ```
 */
export class RunModel {
  private eventCount = 0;
  /** Counters by wire type, in first-seen order. */
  private readonly counters = new Map<string, Counter>();
  private textCount: Counter | undefined;
  private thinkingCount: Counter | undefined;
  private subagentTextCount: Counter | undefined;
  private inputTokens = 0;
  private outputTokens = 0;
  private done: string | undefined;
  private firstErrorMessage: string | undefined;
  /** The approvals and questions since the run last went on; replaced, never changed in place. */
  private gates: readonly (InterruptEvent | AskUserEvent)[] = NO_GATES;
  private readonly tools: ToolCallTracker;
  private readonly owners = new CallOwners();
  /** The delegation the event being taken went to. */
  private owner: Delegation | undefined;
  private readonly subagents = new DelegationTracker({
    start: (delegation) => {
      this.book?.delegation(delegation);
      if (this.listeners.any) this.listeners.tell({ kind: 'delegation-start', delegation });
    },
    event: (delegation, event) => {
      this.owner = delegation;
      if (this.listeners.deltas) this.listeners.tellDelta({ kind: 'delegation-event', delegation, event });
    },
    end: (delegation) => {
      // What it left open closes with it: a sub-agent that ended answers none of its calls.
      const left = this.owners.ended(delegation);
      if (left.length > 0) for (const snapshot of this.tools.close(left)) this.closed(snapshot, delegation);
      if (this.listeners.any) this.listeners.tell({ kind: 'delegation-end', delegation });
    },
  });
  private readonly panels = new PanelBook();
  private readonly listeners = new ChangeListeners();
  /** What a summary keeps that grows with the run, when it is kept. */
  private readonly book: SummaryBook | undefined;
  private finished = false;

  /**
   * `now`: the clock of invocations' `startedAt` and `endedAt`. `summary`:
   * keep what `summary()` gives that grows with the run (the text, every
   * invocation, delegation, panel dispatch, error and question); without it,
   * the model's memory is what is open and counters.
   */
  constructor(now: () => number, options: { readonly summary?: boolean } = {}) {
    this.tools = new ToolCallTracker(now);
    this.book = options.summary === true ? new SummaryBook() : undefined;
  }

  /** Tells `listener` every change from now on, in order; returns what stops it. */
  listen(listener: RunListener, options?: ListenOptions): () => void {
    return this.listeners.add(listener, options);
  }

  /** Takes one event into account; returns itself, for `reduce`. A listener's error is thrown once the event is taken and all have heard. */
  push(event: EvoEvent | UnknownEvent): this {
    this.eventCount++;
    // One `switch`, the hot types first; a listener's error is thrown once the event is taken.
    switch (event.type) {
      case 'text':
        (this.textCount ??= this.counter('text')).n++;
        this.gates = NO_GATES;
        this.book?.text.push(event.content);
        if (this.listeners.deltas) this.told({ kind: 'text', delta: event.content });
        return this;
      case 'subagent_text':
        (this.subagentTextCount ??= this.counter('subagent_text')).n++;
        this.subagents.take(event);
        if (this.listeners.failed) this.listeners.throwHeld();
        return this;
      case 'thinking':
        (this.thinkingCount ??= this.counter('thinking')).n++;
        if (this.listeners.deltas) this.told({ kind: 'thinking', content: event.content });
        return this;
      case 'unknown':
        this.count(event.wireType);
        return this;
      default:
        this.count(event.type);
        this.other(event);
        if (this.listeners.failed) this.listeners.throwHeld();
        return this;
    }
  }

  /** A delta, the one change its event makes. */
  private told(change: RunChange): void {
    this.listeners.tellDelta(change);
    this.listeners.throwHeld();
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
    return this.firstErrorMessage;
  }

  /** The approvals and questions the run has not gone past. */
  get pending(): readonly (InterruptEvent | AskUserEvent)[] {
    return this.gates;
  }

  /** How many events it took. */
  get events(): number {
    return this.eventCount;
  }

  /** Events taken by wire type, in first-seen order. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.counters].map(([type, { n }]) => [type, n]));
  }

  /** The run's summary, as `summarize()` gives it; ends the run first. Only for a model made with `{ summary: true }`. */
  summary(): RunSummary {
    if (this.book === undefined) throw new TypeError('RunModel: summary() needs a model made with { summary: true }');
    this.finish();
    return this.book.summaryOf(this);
  }

  /** How the run ended, if it ended now. */
  outcome(): RunOutcome {
    return outcomeOf(this.firstErrorMessage !== undefined, this.done !== undefined, this.gates.length > 0);
  }

  /**
   * The run ended: closes what is still open, invocations (`awaiting-input`
   * if the run asked about them, else `unfinished`), then delegations. Once;
   * every listener hears every closing change, and the first error of one is
   * thrown after.
   */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    for (const snapshot of this.tools.finish()) this.closed(snapshot, this.owners.of(snapshot.key));
    this.subagents.finish();
    this.listeners.throwHeld();
  }

  /** The known types other than the hot ones. */
  private other(event: EvoEvent): void {
    switch (event.type) {
      case 'usage_stats':
        this.inputTokens += event.input_tokens;
        this.outputTokens += event.output_tokens;
        if (this.listeners.any) this.listeners.tell({ kind: 'usage', usage: this.usage });
        return;
      case 'done':
        this.done = event.response;
        if (this.listeners.any) this.listeners.tell({ kind: 'done', event });
        return;
      case 'error':
        this.firstErrorMessage ??= event.message;
        this.book?.error(event.message);
        if (this.listeners.any) this.listeners.tell({ kind: 'error', event });
        return;
      case 'interrupt':
      case 'ask_user':
        this.gates = [...this.gates, event];
        this.book?.gate(event);
        this.tools.take(event);
        if (this.listeners.any) this.listeners.tell({ kind: 'gate', event });
        return;
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
    this.counters.set(type, counter);
    return counter;
  }

  private count(type: string): void {
    const counter = this.counters.get(type);
    if (counter === undefined) this.counters.set(type, { n: 1 });
    else counter.n++;
  }

  /** Grouped first: a sub-agent's call belongs to a delegation that may start with it. */
  private tool(event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent): void {
    this.owner = undefined;
    this.subagents.take(event);
    const snapshot = this.tools.take(event);
    if (snapshot === undefined) return;
    const owner = this.owner;
    if (owner !== undefined) {
      if (snapshot.status === 'running') this.owners.opened(snapshot.key, owner);
      else this.owners.closed(snapshot.key);
    }
    this.book?.invocation(snapshot);
    if (this.listeners.any) this.listeners.tell({ kind: 'invocation', invocation: snapshot, event, delegation: owner });
  }

  /** An invocation the end of its sub-agent, or of the run, closed. */
  private closed(invocation: ToolInvocation, delegation: Delegation | undefined): void {
    this.book?.invocation(invocation);
    if (this.listeners.any) this.listeners.tell({ kind: 'invocation', invocation, event: undefined, delegation });
  }

  private panel(event: PanelDispatchEvent): void {
    const panel = this.panels.take(event);
    this.book?.panel(panel);
    if (this.listeners.any) this.listeners.tell({ kind: 'panel', panel, event });
  }
}

/** The rule of `RunOutcome`: an `error` event fails a run, no `done` leaves it incomplete, a question nothing went past needs input. */
function outcomeOf(failed: boolean, done: boolean, waiting: boolean): RunOutcome {
  if (failed) return 'failed';
  if (!done) return 'incomplete';
  return waiting ? 'needs-input' : 'completed';
}
