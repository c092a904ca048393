import type { EvoEvent } from '../src/events/EvoEvent.js';
import type { SubagentToolCallEvent } from '../src/events/SubagentToolCallEvent.js';
import type { SubagentToolResultEvent } from '../src/events/SubagentToolResultEvent.js';
import type { ToolCallEvent } from '../src/events/ToolCallEvent.js';
import type { ToolResultEvent } from '../src/events/ToolResultEvent.js';
import type { ToolInvocation } from './ToolInvocation.js';

interface Open {
  snapshot: ToolInvocation;
  argsJson: string;
  scope: string;
}

type Call = ToolCallEvent | SubagentToolCallEvent;
type Result = ToolResultEvent | SubagentToolResultEvent;

/**
 * The pairing state of one run: calls and results in, `ToolInvocation`
 * snapshots out. Shared by `pairToolCalls` and `summarize` so both pair the
 * same way from one pass over the events.
 *
 * A call is keyed by its id within its scope (main agent or sub-agent name).
 * A closed invocation is remembered by its key only, to recognise the
 * producer's re-sends of finished calls: memory is the open calls plus one
 * key per closed call.
 */
export class ToolCallTracker {
  /** Open invocations by key, in the order they opened. */
  private readonly open = new Map<string, Open>();
  private readonly closed = new Set<string>();
  private anonymous = 0;

  constructor(private readonly now: () => number) {}

  /** Feeds one event; returns the snapshot it produced, if any. */
  push(event: EvoEvent): ToolInvocation | undefined {
    switch (event.type) {
      case 'tool_call':
      case 'subagent_tool_call':
        return this.call(event);
      case 'tool_result':
      case 'subagent_tool_result':
        return this.result(event);
      default:
        return undefined;
    }
  }

  /** Closes every open invocation as `unfinished`, in the order they opened. */
  finish(): ToolInvocation[] {
    const endedAt = this.now();
    const unfinished = [...this.open.values()].map(({ snapshot }) => ({ ...snapshot, status: 'unfinished' as const, endedAt }));
    for (const key of this.open.keys()) this.closed.add(key);
    this.open.clear();
    return unfinished;
  }

  private call(event: Call): ToolInvocation | undefined {
    const scope = event.type === 'subagent_tool_call' ? event.subagent : '';
    // An empty id cannot be matched to a re-send: each such call is its own invocation.
    const key = event.id === '' ? `#${++this.anonymous}` : scope ? `${scope}:${event.id}` : event.id;
    if (this.closed.has(key)) return undefined;
    const argsJson = JSON.stringify(event.args);
    const existing = this.open.get(key);
    if (existing) {
      if (existing.argsJson === argsJson) return undefined;
      existing.argsJson = argsJson;
      existing.snapshot = { ...existing.snapshot, args: event.args, callEvent: event };
      return existing.snapshot;
    }
    const snapshot: ToolInvocation = {
      key,
      id: event.id,
      name: event.name,
      args: event.args,
      ...(scope ? { subagent: scope } : {}),
      status: 'running',
      callEvent: event,
      startedAt: this.now(),
    };
    this.open.set(key, { snapshot, argsJson, scope });
    return snapshot;
  }

  private result(event: Result): ToolInvocation | undefined {
    const scope = event.type === 'subagent_tool_result' ? event.subagent : '';
    const id = event.id ?? '';
    let key: string | undefined;
    if (id !== '') {
      key = scope ? `${scope}:${id}` : id;
      if (this.closed.has(key)) return undefined;
      if (!this.open.has(key)) key = undefined;
    }
    // Older producers send no id: the oldest open call of the same name answers.
    if (key === undefined) {
      for (const [candidate, open] of this.open) {
        if (open.scope === scope && open.snapshot.name === event.name && (id === '' || open.snapshot.id === '')) {
          key = candidate;
          break;
        }
      }
    }
    const endedAt = this.now();
    const outcome = {
      status: event.success ? ('succeeded' as const) : ('failed' as const),
      result: event.content,
      success: event.success,
      resultEvent: event,
      endedAt,
    };
    if (key === undefined) {
      // A result whose call was never seen: reported, not dropped.
      const orphan = id === '' ? `#${++this.anonymous}` : scope ? `${scope}:${id}` : id;
      this.closed.add(orphan);
      return { key: orphan, id, name: event.name, args: {}, ...(scope ? { subagent: scope } : {}), startedAt: endedAt, ...outcome };
    }
    const open = this.open.get(key)!;
    this.open.delete(key);
    this.closed.add(key);
    return { ...open.snapshot, ...outcome };
  }
}
