import { asyncScheduler, defer, map, reduce, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type {
  AskUserEvent,
  EvoEvent,
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
import { DelegationTracker, type Delegation } from './DelegationTracker.js';
import type { UsageTotals } from './sumUsage.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

/**
 * One tool invocation in a `RunSummary`: its final state without the events
 * and the output, so a summary stays small however much the tools returned.
 */
export type InvocationSummary = Pick<
  ToolInvocation,
  'key' | 'id' | 'name' | 'args' | 'subagent' | 'instanceId' | 'status' | 'startedAt' | 'endedAt'
> & {
  /** The result's content of a failed invocation: what went wrong. */
  readonly error?: string;
};

/** One delegation in a `RunSummary`. */
export type DelegationSummary = Pick<
  Delegation,
  'key' | 'instanceId' | 'name' | 'subagentType' | 'description' | 'taskCallId'
> & {
  /** Its `subagent_*` events. */
  readonly events: number;
  /** Whether its `subagent_end` arrived before the stream ended. */
  readonly ended: boolean;
};

/** A sub-agent task started from code (`panel_dispatch_*` events), in a `RunSummary`. */
export interface PanelDispatchSummary {
  readonly id: string;
  /** The `code_interpreter` call it ran inside; `''` when the producer did not know it. */
  readonly evalId: string;
  readonly subagentType: string;
  readonly label: string;
  readonly description: string;
  /** `unfinished`: the stream ended before it completed or failed. */
  readonly status: 'completed' | 'failed' | 'unfinished';
  readonly durationMs?: number;
  readonly error?: string;
}

/**
 * How a run ended, from its events:
 * - `completed`: `done`, nothing left to answer;
 * - `needs-input`: `done` right after an `interrupt` or `ask_user` the run did
 *   not go past (`--no-auto-mode`; the producer exits 0). A run that resumes
 *   the thread sends a new message; the paused call never gets its answer;
 * - `failed`: an `error` event;
 * - `incomplete`: no `done` (the stream was cut, or the run was stopped).
 */
export type RunOutcome = 'completed' | 'needs-input' | 'failed' | 'incomplete';

/** Everything a run did, as `summarize` reports it at completion. */
export interface RunSummary {
  readonly outcome: RunOutcome;
  /**
   * `done.response`, or `undefined` when the stream ended without `done`: the
   * main agent's text of the whole run, not a separate final answer.
   */
  readonly response: string | undefined;
  /** The concatenated main-agent `text` deltas. */
  readonly text: string;
  /** The main agent's tokens: sub-agents spend tokens that no event reports. */
  readonly usage: UsageTotals;
  /** Every invocation in its final state, in the order first seen. */
  readonly invocations: readonly InvocationSummary[];
  /** Every delegation, in start order. */
  readonly delegations: readonly DelegationSummary[];
  /** Every panel dispatch, in start order. */
  readonly panelDispatches: readonly PanelDispatchSummary[];
  /** The messages of `error` events. */
  readonly errors: readonly string[];
  /** Every approval request and every question, answered or not. */
  readonly interrupts: readonly InterruptEvent[];
  readonly questions: readonly AskUserEvent[];
  /**
   * The approvals and questions the run stopped at. A run that resumes the
   * thread sends its prompt as a new message, which the agent reads as a new
   * request: the paused call itself is never answered.
   */
  readonly pendingApprovals: readonly InterruptEvent[];
  readonly pendingQuestions: readonly AskUserEvent[];
  /** Events seen, by `type` (unknown types included when kept). */
  readonly counts: Readonly<Record<string, number>>;
  readonly events: number;
}

/**
 * One `RunSummary` when the source completes: how the run ended, the final
 * response, the main agent's token totals, every tool invocation in its final state (without
 * its output, which `pairToolCalls` gives as it comes), every delegation and
 * panel dispatch, errors, the questions and approvals (and which of them the
 * run stopped at), and event counts by type. It pairs and groups in the same
 * single pass as `pairToolCalls` and `groupSubagents`, so it subscribes to
 * the source once. An exception while summarizing errors the subscriber.
 *
 * An error of the source is passed on and no summary is emitted; to summarize
 * a failed run, catch first: `run$.pipe(catchError(() => EMPTY), summarize())`.
 *
 * ```ts
 * const summary = await lastValueFrom(run$.pipe(summarize()));
 * if (summary.outcome === 'needs-input') console.log(summary.pendingQuestions);
 * ```
 *
 * ```
 * source:      --t--c--r--u--d--|
 * summarize(): -----------------(s|)
 * ```
 */
export function summarize(
  options: { readonly scheduler?: SchedulerLike } = {},
): OperatorFunction<EvoEvent | UnknownEvent, RunSummary> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() =>
      source.pipe(
        reduce((tally, event) => tally.push(event), new RunTally(() => scheduler.now())),
        map((tally) => tally.summary()),
      ),
    );
}

const NO_GATES: readonly (InterruptEvent | AskUserEvent)[] = [];

/** Deltas joined a batch at a time: one rope node per delta would keep hundreds of thousands of small strings alive. */
const TEXT_BATCH = 512;

type PanelDispatch = { -readonly [K in keyof PanelDispatchSummary]: PanelDispatchSummary[K] };

/** What one subscription of `summarize` has seen so far. */
class RunTally {
  private events = 0;
  /** Per type, a counter object: one lookup per event, no second one to store the sum. */
  private readonly counts = new Map<string, { n: number }>();
  private readonly textParts: string[] = [];
  private deltas: string[] = [];
  private inputTokens = 0;
  private outputTokens = 0;
  private response: string | undefined;
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
  private readonly subagents = new DelegationTracker({
    start: (delegation) => this.delegations.push(delegation),
    event: () => undefined,
    end: () => undefined,
  });
  private readonly panels = new Map<string, PanelDispatch>();

  constructor(now: () => number) {
    this.tools = new ToolCallTracker(now);
  }

  /** Takes one event into account; returns itself, for `reduce`. */
  push(event: EvoEvent | UnknownEvent): this {
    this.events++;
    this.count(event.type === 'unknown' ? event.wireType : event.type);
    if (event.type === 'unknown') return this;
    switch (event.type) {
      case 'text':
        this.gates = NO_GATES;
        this.text(event.content);
        break;
      case 'usage_stats':
        this.inputTokens += event.input_tokens;
        this.outputTokens += event.output_tokens;
        break;
      case 'done':
        this.response = event.response;
        break;
      case 'error':
        this.errors.push(event.message);
        break;
      case 'interrupt':
      case 'ask_user':
        this.gate(event);
        break;
      case 'tool_call':
      case 'tool_result':
      case 'subagent_tool_call':
      case 'subagent_tool_result':
        // A call after a question is the run going on: it was answered.
        this.gates = NO_GATES;
        this.tool(event);
        break;
      case 'subagent_start':
      case 'subagent_end':
      case 'subagent_text':
        this.tools.push(event);
        this.subagents.push(event);
        break;
      case 'panel_dispatch_start':
      case 'panel_dispatch_complete':
      case 'panel_dispatch_error':
        this.panel(event);
        break;
    }
    return this;
  }

  summary(): RunSummary {
    for (const snapshot of this.tools.finish()) this.keep(snapshot);
    this.subagents.finish();
    const pendingApprovals = this.gates.filter((g): g is InterruptEvent => g.type === 'interrupt');
    const pendingQuestions = this.gates.filter((g): g is AskUserEvent => g.type === 'ask_user');
    return {
      outcome: outcomeOf(this.errors.length > 0, this.response !== undefined, this.gates.length > 0),
      response: this.response,
      text: this.textParts.join('') + this.deltas.join(''),
      usage: {
        inputTokens: this.inputTokens,
        outputTokens: this.outputTokens,
        totalTokens: this.inputTokens + this.outputTokens,
      },
      invocations: [...this.invocations.values()].filter((i): i is InvocationSummary => i !== undefined),
      delegations: this.delegations.map((d) => ({
        key: d.key,
        instanceId: d.instanceId,
        name: d.name,
        subagentType: d.subagentType,
        description: d.description,
        taskCallId: d.taskCallId,
        events: d.events,
        ended: d.ended,
      })),
      panelDispatches: [...this.panels.values()],
      errors: this.errors,
      interrupts: this.interrupts,
      questions: this.questions,
      pendingApprovals,
      pendingQuestions,
      counts: Object.fromEntries([...this.counts].map(([type, { n }]) => [type, n])),
      events: this.events,
    };
  }

  private count(type: string): void {
    let count = this.counts.get(type);
    if (count === undefined) {
      count = { n: 0 };
      this.counts.set(type, count);
    }
    count.n++;
  }

  private text(delta: string): void {
    if (this.deltas.push(delta) === TEXT_BATCH) {
      this.textParts.push(this.deltas.join(''));
      this.deltas = [];
    }
  }

  private gate(event: InterruptEvent | AskUserEvent): void {
    if (event.type === 'interrupt') this.interrupts.push(event);
    else this.questions.push(event);
    this.gates = [...this.gates, event];
    this.tools.push(event);
  }

  private tool(event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent): void {
    const snapshot = this.tools.push(event);
    if (snapshot) this.keep(snapshot);
    this.subagents.push(event);
  }

  private panel(event: PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void {
    if (event.type === 'panel_dispatch_start') {
      this.panels.set(event.id, {
        id: event.id,
        evalId: event.eval_id,
        subagentType: event.subagent_type,
        label: event.label,
        description: event.description,
        status: 'unfinished',
      });
      return;
    }
    const panel = this.panels.get(event.id) ?? this.unannouncedPanel(event.id, event.eval_id);
    panel.durationMs = event.duration_ms;
    if (event.type === 'panel_dispatch_complete') panel.status = 'completed';
    else Object.assign(panel, { status: 'failed', error: event.error });
  }

  private keep(i: ToolInvocation): void {
    if (i.status === 'running') {
      if (!this.invocations.has(i.key)) this.invocations.set(i.key, undefined);
      return;
    }
    this.invocations.set(i.key, {
      key: i.key,
      id: i.id,
      name: i.name,
      args: i.args,
      subagent: i.subagent,
      instanceId: i.instanceId,
      status: i.status,
      error: i.status === 'failed' ? i.result : undefined,
      startedAt: i.startedAt,
      endedAt: i.endedAt,
    });
  }

  /** A completion whose start this stream did not show. */
  private unannouncedPanel(id: string, evalId: string): PanelDispatch {
    const panel: PanelDispatch = { id, evalId, subagentType: '', label: '', description: '', status: 'unfinished' };
    this.panels.set(id, panel);
    return panel;
  }
}

function outcomeOf(failed: boolean, done: boolean, waiting: boolean): RunOutcome {
  if (failed) return 'failed';
  if (!done) return 'incomplete';
  return waiting ? 'needs-input' : 'completed';
}
