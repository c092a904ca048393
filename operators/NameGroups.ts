import { PLACEHOLDER, type DelegationState, type SubagentEvent } from './delegations.js';

/**
 * The open delegations of a stream without instance ids, in start order,
 * and how their events are told apart when only the sub-agent's name says
 * whose they are: a `subagent_text` by `instance_id` (a new instance id goes
 * to the oldest of them that has none yet); a tool call re-sent or a result
 * with an id where that id first went; an id-less result to the oldest with
 * an open call of that tool; anything else to the oldest.
 */
export class NameGroups {
  /** Open delegations, in start order. */
  readonly open: DelegationState[] = [];
  /** Sub-agent call ids of open delegations. */
  private readonly callOwners = new Map<string, DelegationState>();

  add(state: DelegationState): void {
    this.open.push(state);
  }

  remove(state: DelegationState): void {
    const at = this.open.indexOf(state);
    if (at !== -1) this.open.splice(at, 1);
    for (const [id, owner] of this.callOwners) if (owner === state) this.callOwners.delete(id);
  }

  /** The delegation a `subagent_start` without a task call renames: the one whose task names it, else a placeholder. */
  renamedBy(name: string): DelegationState | undefined {
    return (
      this.open.find((s) => s.task?.subagentType === name && s.delegation.name !== name) ??
      (name === PLACEHOLDER ? undefined : this.open.find((s) => s.delegation.name === PLACEHOLDER))
    );
  }

  /** The delegation a `subagent_end` of `name` ends: one whose task result came first, else the oldest. */
  endedBy(name: string): DelegationState | undefined {
    const named = this.open.filter((s) => s.delegation.name === name);
    return (
      named.find((s) => s.delegation.ending) ??
      named[0] ??
      this.open.find((s) => s.delegation.name === PLACEHOLDER && s.delegation.ending) ??
      this.open.find((s) => s.delegation.name === PLACEHOLDER)
    );
  }

  /** The delegation `event` belongs to, noting its calls; `undefined` when none of its name (or a placeholder) is open. */
  route(event: SubagentEvent): DelegationState | undefined {
    const state = this.ownerOf(event);
    if (state) this.note(state, event);
    return state;
  }

  /** What later events of the same delegation are told apart by: its open calls and its instance ids. */
  note(state: DelegationState, event: SubagentEvent): void {
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
  }

  private ownerOf(event: SubagentEvent): DelegationState | undefined {
    // Most events have a single candidate: find it without building a list.
    let first: DelegationState | undefined;
    let several = false;
    for (const s of this.open) {
      if (s.delegation.name !== event.subagent) continue;
      if (first) {
        several = true;
        break;
      }
      first = s;
    }
    if (!first) return this.open.find((s) => s.delegation.name === PLACEHOLDER);
    return several
      ? this.among(
          this.open.filter((s) => s.delegation.name === event.subagent),
          event,
        )
      : first;
  }

  /** The owner among several open delegations of the event's name, oldest first. */
  private among(candidates: DelegationState[], event: SubagentEvent): DelegationState {
    const first = candidates[0]!;
    if (event.type === 'subagent_text') {
      const instance = event.instance_id;
      if (instance === undefined) return first;
      return (
        candidates.find((s) => s.instanceIds.has(instance)) ?? candidates.find((s) => s.instanceIds.size === 0) ?? first
      );
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
