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
import type { InvocationSummary, PanelDispatchSummary, RunOutcome, RunSummary } from './summarize.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

const NO_GATES: readonly (InterruptEvent | AskUserEvent)[] = [];

/** Deltas joined a batch at a time: one rope node per delta would keep hundreds of thousands of small strings alive. */
const TEXT_BATCH = 512;

type PanelDispatch = { -readonly [K in keyof PanelDispatchSummary]: PanelDispatchSummary[K] };

/**
 * What a run has shown so far, for `summarize`: one per subscription, fed
 * every event, asked for the `RunSummary` at the end. A plain class, testable
 * without Rx; it pairs and groups through the same trackers as
 * `pairToolCalls` and `groupSubagents`.
 */
export class RunTally {
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

/** The rule of `RunOutcome`: an `error` event fails a run, no `done` leaves it incomplete, a question nothing went past needs input. */
export function outcomeOf(failed: boolean, done: boolean, waiting: boolean): RunOutcome {
  if (failed) return 'failed';
  if (!done) return 'incomplete';
  return waiting ? 'needs-input' : 'completed';
}
