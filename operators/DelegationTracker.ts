import { isKnownEvent, type EvoEvent, type UnknownEvent } from '../src/events/codecs.js';
import {
  type Delegation,
  type DelegationSink,
  type DelegationState,
  type SubagentEvent,
  type TaskCall,
} from './delegations.js';
import { NameGroups } from './NameGroups.js';

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The `instance_id` of a sub-agent event, when it has one that can identify it. */
function instanceOf(event: { readonly instance_id?: string | number }): string | undefined {
  const id = event.instance_id;
  return id === undefined || id === '' ? undefined : String(id);
}

/**
 * Which delegation each sub-agent event belongs to. Shared by
 * `groupSubagents` and `summarize`.
 *
 * Streams of EvoScientist 0.2.x name each delegation: its `subagent_start`
 * carries an `instance_id` and the id of the `task` call that started it
 * (`tool_call_id`), and every later event of it carries the same
 * `instance_id`. Such a delegation is keyed by its instance; its events go to
 * it whatever their order, and its `subagent_end` ends it, before or after
 * the task's result. The task call's `args` give its `subagentType` and
 * `description`.
 *
 * Streams without instance ids (older producers, other tools) are grouped by
 * name. A delegation is then keyed by the `task` tool call that started it. Its
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
  /** Open delegations known by instance id. */
  private readonly instances = new Map<string, DelegationState>();
  /** Open delegations without one: grouped by name. */
  private readonly byName = new NameGroups();
  private readonly tasks = new Map<string, TaskCall>();
  /** Task calls not yet matched to a `subagent_start`, oldest first. */
  private readonly pending: TaskCall[] = [];
  /** Ids of task calls whose delegation is over: the producer re-sends them, and they must not start another. */
  private readonly finished = new Set<string>();
  private implicit = 0;
  private started = 0;

  constructor(private readonly sink: DelegationSink) {}

  push(event: EvoEvent | UnknownEvent): void {
    if (isKnownEvent(event)) this.take(event);
  }

  /** `push` for an event already known not to be an `UnknownEvent`. */
  take(event: EvoEvent): void {
    switch (event.type) {
      case 'tool_call':
        if (event.name === 'task') this.taskCall(event.id, event.args);
        return;
      case 'tool_result':
        if (event.name === 'task') this.taskResult(event.id ?? '', event.success);
        return;
      case 'subagent_start': {
        const instance = instanceOf(event);
        if (instance === undefined) return this.start(event.name, event.description);
        return this.startInstance(instance, event.name, event.description, event.tool_call_id ?? '');
      }
      case 'subagent_end': {
        const state = this.instances.get(instanceOf(event) ?? '');
        if (state) return this.close(state);
        return this.end(event.name);
      }
      case 'subagent_tool_call':
      case 'subagent_tool_result':
      case 'subagent_text': {
        const state = this.instances.get(instanceOf(event) ?? '');
        if (state) return this.deliver(state, event);
        return this.route(event);
      }
      default:
        return;
    }
  }

  /** Ends every open delegation, in start order. */
  finish(): void {
    const open = [...this.instances.values(), ...this.byName.open];
    open.sort((a, b) => a.order - b.order);
    for (const state of open) this.close(state, false);
  }

  private startInstance(instance: string, name: string, description: string, taskCallId: string): void {
    const known = this.instances.get(instance);
    if (known) {
      // The same delegation announced again: it keeps its identity, takes the latest name.
      known.delegation.name = name;
      return;
    }
    let at = taskCallId === '' ? -1 : this.pending.findIndex((task) => task.id === taskCallId);
    if (at === -1 && taskCallId === '') at = this.pending.findIndex((task) => task.subagentType === name);
    const task = at === -1 ? this.tasks.get(taskCallId) : this.pending.splice(at, 1)[0];
    this.begin(name, description, task ?? (taskCallId === '' ? undefined : this.taskOf(taskCallId)), instance);
  }

  /** A task call the start names but that was not seen (it came before a `--resume`): known by its id only. */
  private taskOf(id: string): TaskCall {
    const task: TaskCall = { id, subagentType: undefined, description: undefined };
    this.tasks.set(id, task);
    return task;
  }

  private taskCall(id: string, args: Readonly<Record<string, unknown>>): void {
    if (this.finished.has(id)) return;
    const subagentType = text(args['subagent_type']);
    const description = text(args['description']);
    const known = id === '' ? undefined : this.tasks.get(id);
    if (known) {
      known.subagentType = subagentType ?? known.subagentType;
      known.description = description ?? known.description;
      // A delegation already started from it learns what the call says.
      for (const state of [...this.instances.values(), ...this.byName.open]) {
        if (state.task !== known) continue;
        state.delegation.subagentType = known.subagentType;
        if (state.delegation.description === '') state.delegation.description = known.description ?? '';
      }
      return;
    }
    const task: TaskCall = { id, subagentType, description };
    if (id !== '') this.tasks.set(id, task);
    this.pending.push(task);
  }

  private taskResult(id: string, success: boolean): void {
    if (id === '') {
      // Older producers: a failure most likely answers a task that never started;
      // otherwise the oldest delegation not yet ending is the one answered.
      const state =
        success || this.pending.length === 0 ? this.byName.open.find((s) => !s.delegation.ending) : undefined;
      if (state) state.delegation.ending = true;
      else this.forget(this.pending.shift());
      return;
    }
    const state = this.byName.open.find((s) => s.task?.id === id);
    if (state) {
      state.delegation.ending = true;
      return;
    }
    // Its delegation is known by instance and ends at its own subagent_end, before or after this.
    if ([...this.instances.values()].some((s) => s.task?.id === id)) return;
    // A task that ended without starting a sub-agent (it failed first): it will start none.
    const waiting = this.pending.findIndex((task) => task.id === id);
    this.forget(
      waiting === -1 ? { id, subagentType: undefined, description: undefined } : this.pending.splice(waiting, 1)[0],
    );
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
    const renamed = this.byName.renamedBy(name);
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
    const same = this.byName.open.findLast((s) => s.delegation.name === name);
    if (same) {
      same.delegation.description = description;
      return;
    }
    this.begin(name, description, undefined);
  }

  private begin(name: string, description: string, task: TaskCall | undefined, instance?: string): DelegationState {
    const taskCallId = task && task.id !== '' ? task.id : undefined;
    const delegation: Delegation = {
      key: instance ?? taskCallId ?? `subagent#${++this.implicit}`,
      instanceId: instance,
      name,
      subagentType: task?.subagentType,
      // 0.2.x sends an empty description on the start: the task call's then says what it is.
      description: description !== '' ? description : (task?.description ?? ''),
      taskCallId,
      events: 0,
      ending: false,
      open: true,
      ended: false,
    };
    const state: DelegationState = {
      delegation,
      task,
      openCalls: new Map(),
      instanceIds: new Set(),
      order: this.started++,
    };
    // Known before the sink hears of it: a sink that throws leaves the tracker whole.
    if (instance === undefined) this.byName.add(state);
    else this.instances.set(instance, state);
    this.sink.start(delegation);
    return state;
  }

  private end(name: string): void {
    const state = this.byName.endedBy(name);
    if (state) this.close(state);
  }

  private close(state: DelegationState, ended = true): void {
    if (state.delegation.instanceId !== undefined) this.instances.delete(state.delegation.instanceId);
    this.byName.remove(state);
    if (state.task && state.task.id !== '') {
      this.tasks.delete(state.task.id);
      this.finished.add(state.task.id);
    }
    state.delegation.open = false;
    state.delegation.ended = ended;
    this.sink.end(state.delegation);
  }

  /** An event of a delegation without an instance id: to the one of its name, else to one that starts with it. */
  private route(event: SubagentEvent): void {
    let state = this.byName.route(event);
    if (!state) {
      state = this.begin(event.subagent, '', undefined);
      this.byName.note(state, event);
    }
    this.deliver(state, event);
  }

  private deliver(state: DelegationState, event: SubagentEvent): void {
    state.delegation.events++;
    this.sink.event(state.delegation, event);
  }
}
