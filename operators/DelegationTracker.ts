import {
  isKnownEvent,
  type EvoEvent,
  type SubagentTextEvent,
  type SubagentToolCallEvent,
  type SubagentToolResultEvent,
  type UnknownEvent,
} from '../src/events.js';

/** An event made inside a sub-agent: what a delegation's `events$` carries. */
export type SubagentEvent = SubagentToolCallEvent | SubagentToolResultEvent | SubagentTextEvent;

/** The state of one delegation, as `DelegationTracker` keeps it. */
export interface Delegation {
  /** The id of the `task` tool call that started it, or `subagent#n` when none was seen. */
  readonly key: string;
  /** The latest name: a second `subagent_start` replaces a placeholder. */
  name: string;
  description: string;
  /** The `task` call's id, when one was seen. */
  readonly taskCallId: string | undefined;
  /** Events routed to it so far. */
  events: number;
  /** Its `task` result has arrived: the next `subagent_end` of its name is its own. */
  ending: boolean;
  open: boolean;
}

/** What `DelegationTracker` reports. */
export interface DelegationSink {
  start(delegation: Delegation): void;
  event(delegation: Delegation, event: SubagentEvent): void;
  end(delegation: Delegation): void;
}

/** The name the producer gives a sub-agent before it knows the real one. */
const PLACEHOLDER = 'sub-agent';

interface TaskCall {
  readonly id: string;
  subagentType: string | undefined;
}

interface State {
  readonly delegation: Delegation;
  readonly task: TaskCall | undefined;
  /** Sub-agent tool calls still open, by name: where an id-less result goes. */
  readonly openCalls: Map<string, number>;
  readonly instanceIds: Set<string | number>;
}

/**
 * Which delegation each sub-agent event belongs to. Shared by
 * `groupSubagents` and `summarize`.
 *
 * A delegation is keyed by the `task` tool call that started it. Its
 * `subagent_start` is matched to a task call not yet started (one whose
 * `subagent_type` is that name first); a `subagent_start` with no such call
 * renames the open delegation it belongs to (the one whose task names it, else
 * one still called `sub-agent`). A `task` result marks its delegation as
 * ending; the next `subagent_end` of that name ends it.
 *
 * Events carry only the sub-agent's name. When several open delegations share
 * it: a `subagent_text` goes by `instance_id` (a new instance id goes to the
 * oldest of them that has none yet); a tool call re-sent or a result with an
 * id goes where that id first went; an id-less result goes to the oldest with
 * an open call of that tool; anything else to the oldest. An event with no
 * open delegation of its name goes to one still called `sub-agent`, else
 * starts a delegation of its own: no event is dropped.
 */
export class DelegationTracker {
  /** Open delegations, in start order. */
  private readonly open: State[] = [];
  private readonly tasks = new Map<string, TaskCall>();
  /** Task calls not yet matched to a `subagent_start`, oldest first. */
  private readonly pending: TaskCall[] = [];
  /** Ids of task calls whose delegation is over: the producer re-sends them, and they must not start another. */
  private readonly finished = new Set<string>();
  /** Sub-agent call ids of open delegations. */
  private readonly callOwners = new Map<string, State>();
  private implicit = 0;

  constructor(private readonly sink: DelegationSink) {}

  push(event: EvoEvent | UnknownEvent): void {
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'tool_call':
        if (event.name === 'task') this.taskCall(event.id, event.args);
        return;
      case 'tool_result':
        if (event.name === 'task') this.taskResult(event.id ?? '', event.success);
        return;
      case 'subagent_start':
        return this.start(event.name, event.description);
      case 'subagent_end':
        return this.end(event.name);
      case 'subagent_tool_call':
      case 'subagent_tool_result':
      case 'subagent_text':
        return this.route(event);
      default:
        return;
    }
  }

  /** Ends every open delegation, oldest first. */
  finish(): void {
    for (const state of [...this.open]) this.close(state);
  }

  private taskCall(id: string, args: Readonly<Record<string, unknown>>): void {
    if (this.finished.has(id)) return;
    const subagentType = typeof args['subagent_type'] === 'string' ? args['subagent_type'] : undefined;
    const known = id === '' ? undefined : this.tasks.get(id);
    if (known) {
      known.subagentType = subagentType ?? known.subagentType;
      return;
    }
    const task: TaskCall = { id, subagentType };
    if (id !== '') this.tasks.set(id, task);
    this.pending.push(task);
  }

  private taskResult(id: string, success: boolean): void {
    if (id === '') {
      // Older producers: a failure most likely answers a task that never started;
      // otherwise the oldest delegation not yet ending is the one answered.
      const state = success || this.pending.length === 0 ? this.open.find((s) => !s.delegation.ending) : undefined;
      if (state) state.delegation.ending = true;
      else this.forget(this.pending.shift());
      return;
    }
    const state = this.open.find((s) => s.task?.id === id);
    if (state) {
      state.delegation.ending = true;
      return;
    }
    // A task that ended without starting a sub-agent (it failed first): it will start none.
    const waiting = this.pending.findIndex((task) => task.id === id);
    this.forget(waiting === -1 ? { id, subagentType: undefined } : this.pending.splice(waiting, 1)[0]);
  }

  /** A task call that will start no delegation. */
  private forget(task: TaskCall | undefined): void {
    if (task === undefined || task.id === '') return;
    this.tasks.delete(task.id);
    this.finished.add(task.id);
  }

  private start(name: string, description: string): void {
    const typed = this.pending.findIndex((task) => task.subagentType === name);
    if (typed !== -1) {
      this.begin(name, description, this.pending.splice(typed, 1)[0]);
      return;
    }
    const renamed =
      this.open.find((s) => s.task?.subagentType === name && s.delegation.name !== name) ??
      (name === PLACEHOLDER ? undefined : this.open.find((s) => s.delegation.name === PLACEHOLDER));
    if (renamed) {
      renamed.delegation.name = name;
      renamed.delegation.description = description;
      return;
    }
    if (this.pending.length > 0) {
      this.begin(name, description, this.pending.shift());
      return;
    }
    // A repeated start for a delegation already named so.
    const same = this.open.findLast((s) => s.delegation.name === name);
    if (same) {
      same.delegation.description = description;
      return;
    }
    this.begin(name, description, undefined);
  }

  private begin(name: string, description: string, task: TaskCall | undefined): State {
    const delegation: Delegation = {
      key: task && task.id !== '' ? task.id : `subagent#${++this.implicit}`,
      name,
      description,
      taskCallId: task && task.id !== '' ? task.id : undefined,
      events: 0,
      ending: false,
      open: true,
    };
    const state: State = { delegation, task, openCalls: new Map(), instanceIds: new Set() };
    this.open.push(state);
    this.sink.start(delegation);
    return state;
  }

  private end(name: string): void {
    const named = this.open.filter((s) => s.delegation.name === name);
    const state =
      named.find((s) => s.delegation.ending) ??
      named[0] ??
      this.open.find((s) => s.delegation.name === PLACEHOLDER && s.delegation.ending) ??
      this.open.find((s) => s.delegation.name === PLACEHOLDER);
    if (state) this.close(state);
  }

  private close(state: State): void {
    const at = this.open.indexOf(state);
    if (at !== -1) this.open.splice(at, 1);
    for (const [id, owner] of this.callOwners) if (owner === state) this.callOwners.delete(id);
    if (state.task && state.task.id !== '') {
      this.tasks.delete(state.task.id);
      this.finished.add(state.task.id);
    }
    state.delegation.open = false;
    this.sink.end(state.delegation);
  }

  private route(event: SubagentEvent): void {
    const state = this.owner(event);
    const { openCalls } = state;
    if (event.type === 'subagent_tool_call' && event.id !== '') {
      if (!this.callOwners.has(event.id)) openCalls.set(event.name, (openCalls.get(event.name) ?? 0) + 1);
      this.callOwners.set(event.id, state);
    } else if (event.type === 'subagent_tool_call') {
      openCalls.set(event.name, (openCalls.get(event.name) ?? 0) + 1);
    } else if (event.type === 'subagent_tool_result') {
      openCalls.set(event.name, Math.max(0, (openCalls.get(event.name) ?? 0) - 1));
    } else if (event.instance_id !== undefined) {
      state.instanceIds.add(event.instance_id);
    }
    state.delegation.events++;
    this.sink.event(state.delegation, event);
  }

  private owner(event: SubagentEvent): State {
    // Most events have a single candidate: find it without building a list.
    let first: State | undefined;
    let several = false;
    for (const s of this.open) {
      if (s.delegation.name !== event.subagent) continue;
      if (first) {
        several = true;
        break;
      }
      first = s;
    }
    if (!first) first = this.open.find((s) => s.delegation.name === PLACEHOLDER);
    if (!first) return this.begin(event.subagent, '', undefined);
    if (!several) return first;
    const candidates = this.open.filter((s) => s.delegation.name === event.subagent);
    if (event.type === 'subagent_text') {
      const instance = event.instance_id;
      if (instance !== undefined) {
        return (
          candidates.find((s) => s.instanceIds.has(instance)) ??
          candidates.find((s) => s.instanceIds.size === 0) ??
          first
        );
      }
      return first;
    }
    const id = event.id ?? '';
    const byId = id === '' ? undefined : this.callOwners.get(id);
    if (byId && candidates.includes(byId)) return byId;
    if (event.type === 'subagent_tool_result') {
      return candidates.find((s) => (s.openCalls.get(event.name) ?? 0) > 0) ?? first;
    }
    return first;
  }
}
