import {
  briefArgs,
  type PanelDispatchSummary,
  type RunSummary,
  type SubagentRun,
  type ToolInvocation,
  type UsageTotals,
  type ViewAction,
} from '../operators/index.js';

// The live view's state, built from `viewActions`. It keeps what a frame can
// show, plus counters: a tool's result is kept as a short preview, never
// whole, and old entries are forgotten, so that a run of any length and any
// output size costs the view the same memory.

/** How many characters of a tool's arguments or error a view keeps. */
export const PREVIEW_CHARS = 200;
/** How many main-agent tools, delegations, tools per delegation, panel dispatches and errors are kept. */
export const VIEW_LIMITS = { tools: 256, delegations: 64, delegationTools: 16, panels: 64, errors: 16 } as const;

type Status = ToolInvocation['status'];

/** A tool call as the view shows it: a short preview of what it was asked, or of what went wrong. */
export interface ViewTool {
  readonly key: string;
  readonly name: string;
  readonly status: Status;
  /** Its first string argument (or its arguments as JSON), or for a failed call its result, cut to `PREVIEW_CHARS`. */
  readonly detail: string;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
}

/**
 * The start of `text`, copied: V8 may make a slice of a long string a view
 * that keeps the whole string alive, which is what a preview must not do.
 */
function preview(text: string): string {
  return [...text.slice(0, PREVIEW_CHARS)].join('');
}

function viewTool(invocation: ToolInvocation): ViewTool {
  const failed = invocation.status === 'failed';
  return {
    key: invocation.key,
    name: preview(invocation.name),
    status: invocation.status,
    detail: preview(failed ? (invocation.result ?? '') : briefArgs(invocation.args, PREVIEW_CHARS)),
    startedAt: invocation.startedAt,
    endedAt: invocation.endedAt,
  };
}

/**
 * Tool calls by key in the order first seen, the latest state of each,
 * updated in place: at most `limit` of them, the oldest finished ones
 * forgotten first, with counters over all of them.
 */
export class ToolList {
  private readonly entries = new Map<string, ViewTool>();
  private readonly counts = new Map<Status, number>();
  private seen = 0;

  constructor(private readonly limit: number) {}

  set(invocation: ToolInvocation): void {
    const old = this.entries.get(invocation.key);
    if (old === undefined) this.seen++;
    else this.counts.set(old.status, (this.counts.get(old.status) ?? 1) - 1);
    this.counts.set(invocation.status, (this.counts.get(invocation.status) ?? 0) + 1);
    this.entries.set(invocation.key, viewTool(invocation));
    if (this.entries.size > this.limit) this.forgetOne();
  }

  /** Every tool call seen, forgotten ones included. */
  get size(): number {
    return this.seen;
  }

  /** How many tool calls are in that state now, forgotten ones included. */
  inState(status: Status): number {
    return this.counts.get(status) ?? 0;
  }

  /** The last `n` kept, oldest first: a frame draws only what fits. */
  latest(n: number): readonly ViewTool[] {
    const kept = this.kept();
    return kept.slice(Math.max(0, kept.length - n));
  }

  /** The ones kept, oldest first. */
  kept(): readonly ViewTool[] {
    return [...this.entries.values()];
  }

  /** Forgets the oldest finished entry, else the oldest; a running one must stay to be updated. */
  private forgetOne(): void {
    let oldest: string | undefined;
    for (const [key, tool] of this.entries) {
      oldest ??= key;
      if (tool.status !== 'running') {
        oldest = key;
        break;
      }
    }
    if (oldest !== undefined) this.entries.delete(oldest);
  }
}

/** A delegation as the view shows it. */
export interface ViewDelegation {
  readonly run: SubagentRun;
  readonly tools: ToolList;
  /** Its event count once it has ended; `undefined` while it runs. */
  events: number | undefined;
}

/** A panel dispatch as the view shows it. */
export interface ViewPanel {
  readonly id: string;
  readonly label: string;
  readonly subagentType: string;
  readonly status: 'running' | 'completed' | 'failed';
  readonly durationMs: number | undefined;
  readonly error: string | undefined;
}

/** Removes the oldest entries of a map past `limit`. */
function trim<K, V>(map: Map<K, V>, limit: number): void {
  for (const key of map.keys()) {
    if (map.size <= limit) return;
    map.delete(key);
  }
}

/**
 * Everything the live view draws, changed in place by `apply`: the work per
 * event and the memory do not grow with the run, however many tools it calls
 * and however much they return.
 */
export class ViewModel {
  thinking = '';
  text = '';
  /** Main-agent tools, `task` delegations left to the sub-agent tree. */
  readonly tools = new ToolList(VIEW_LIMITS.tools);
  private readonly byRun = new Map<SubagentRun, ViewDelegation>();
  /** Delegations seen, forgotten ones included. */
  delegationCount = 0;
  readonly panels = new Map<string, ViewPanel>();
  /** Panel dispatches seen, forgotten ones included. */
  panelCount = 0;
  /** The latest error messages, each cut to a preview; `errorCount` counts them all. */
  readonly errors: string[] = [];
  errorCount = 0;
  usage: UsageTotals = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  summary: RunSummary | undefined;

  /** The delegation of a sub-agent run, while it is kept. */
  delegation(run: SubagentRun): ViewDelegation | undefined {
    return this.byRun.get(run);
  }

  /** The kept delegations, in start order. */
  get delegations(): readonly ViewDelegation[] {
    return [...this.byRun.values()];
  }

  apply(action: ViewAction): this {
    switch (action.kind) {
      case 'thinking':
        this.thinking = action.content;
        break;
      case 'text':
        this.text = action.text;
        break;
      case 'tool':
        (action.delegation ? this.byRun.get(action.delegation)?.tools : this.tools)?.set(action.invocation);
        break;
      case 'subagent-start':
        this.delegationCount++;
        this.byRun.set(action.delegation, {
          run: action.delegation,
          tools: new ToolList(VIEW_LIMITS.delegationTools),
          events: undefined,
        });
        trim(this.byRun, VIEW_LIMITS.delegations);
        break;
      case 'subagent-end': {
        const delegation = this.byRun.get(action.delegation);
        if (delegation) delegation.events = action.events;
        break;
      }
      case 'panel':
        this.panel(action.panel);
        break;
      case 'usage':
        this.usage = action.usage;
        break;
      case 'error':
        this.error(action.event.message);
        break;
      case 'summary':
        this.summary = action.summary;
        break;
    }
    return this;
  }

  private error(message: string): void {
    this.errorCount++;
    this.errors.push(preview(message));
    if (this.errors.length > VIEW_LIMITS.errors) this.errors.shift();
  }

  /** A panel dispatch in the state the run model gives, its words cut to previews. */
  private panel(state: PanelDispatchSummary): void {
    if (!this.panels.has(state.id)) this.panelCount++;
    this.panels.set(state.id, {
      id: state.id,
      label: preview(state.label),
      subagentType: preview(state.subagentType),
      status: state.status === 'unfinished' ? 'running' : state.status,
      durationMs: state.durationMs,
      error: state.error === undefined ? undefined : preview(state.error),
    });
    trim(this.panels, VIEW_LIMITS.panels);
  }
}
