import {
  isKnownEvent,
  type EvoEvent,
  type SubagentToolCallEvent,
  type SubagentToolResultEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type UnknownEvent,
} from '../src/events.js';

/**
 * One tool invocation as `pairToolCalls` sees it at one moment. Each snapshot
 * is a new object; a later snapshot with the same `key` supersedes it.
 */
export interface ToolInvocation {
  /** Unique per invocation within a run: the wire id (prefixed by the sub-agent for its calls), or `#n` for a call without one. */
  readonly key: string;
  /** The id as on the wire; `''` when the producer sent none. */
  readonly id: string;
  readonly name: string;
  /** The latest arguments: the complete ones once the producer has re-sent the call. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The sub-agent that made the call; absent for the main agent's calls. */
  readonly subagent?: string;
  /** `unfinished`: the stream ended before its result. */
  readonly status: 'running' | 'succeeded' | 'failed' | 'unfinished';
  /** The result's content, once it has arrived. */
  readonly result?: string;
  readonly success?: boolean;
  /** The latest call event; absent only for a result whose call was never seen. */
  readonly callEvent?: ToolCallEvent | SubagentToolCallEvent;
  readonly resultEvent?: ToolResultEvent | SubagentToolResultEvent;
  /** Scheduler time of the first call event, and of the result or the end of the stream. */
  readonly startedAt: number;
  readonly endedAt?: number;
}

/**
 * Whether two values parsed from JSON are equal, compared in place: cheaper
 * than comparing `JSON.stringify` output, which allocates both strings.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}

type Call = ToolCallEvent | SubagentToolCallEvent;
type Result = ToolResultEvent | SubagentToolResultEvent;

/** Every snapshot is built here, with one property order, so they all share one object shape. */
function snapshot(
  key: string,
  id: string,
  name: string,
  args: Readonly<Record<string, unknown>>,
  subagent: string | undefined,
  status: ToolInvocation['status'],
  callEvent: Call | undefined,
  startedAt: number,
  resultEvent?: Result,
  endedAt?: number,
): ToolInvocation {
  return {
    key,
    id,
    name,
    args,
    subagent,
    status,
    result: resultEvent?.content,
    success: resultEvent?.success,
    callEvent,
    resultEvent,
    startedAt,
    endedAt,
  };
}

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
  private readonly open = new Map<string, ToolInvocation>();
  private readonly closed = new Set<string>();
  private anonymous = 0;

  constructor(private readonly now: () => number) {}

  /** Feeds one event; returns the snapshot it produced, if any. */
  push(event: EvoEvent | UnknownEvent): ToolInvocation | undefined {
    if (!isKnownEvent(event)) return undefined;
    switch (event.type) {
      case 'tool_call':
        return this.call(event, undefined);
      case 'subagent_tool_call':
        return this.call(event, event.subagent);
      case 'tool_result':
        return this.result(event, undefined);
      case 'subagent_tool_result':
        return this.result(event, event.subagent);
      default:
        return undefined;
    }
  }

  /** Closes every open invocation as `unfinished`, in the order they opened. */
  finish(): ToolInvocation[] {
    const endedAt = this.now();
    const unfinished: ToolInvocation[] = [];
    for (const [key, s] of this.open) {
      unfinished.push(
        snapshot(s.key, s.id, s.name, s.args, s.subagent, 'unfinished', s.callEvent, s.startedAt, undefined, endedAt),
      );
      this.closed.add(key);
    }
    this.open.clear();
    return unfinished;
  }

  private key(id: string, scope: string | undefined): string {
    return scope === undefined ? id : `${scope}:${id}`;
  }

  private call(event: Call, scope: string | undefined): ToolInvocation | undefined {
    // An empty id cannot be matched to a re-send: each such call is its own invocation.
    const key = event.id === '' ? `#${++this.anonymous}` : this.key(event.id, scope);
    if (this.closed.has(key)) return undefined;
    const open = this.open.get(key);
    if (open) {
      if (sameJson(open.args, event.args)) return undefined;
      const updated = snapshot(key, open.id, open.name, event.args, scope, 'running', event, open.startedAt);
      this.open.set(key, updated);
      return updated;
    }
    const opened = snapshot(key, event.id, event.name, event.args, scope, 'running', event, this.now());
    this.open.set(key, opened);
    return opened;
  }

  private result(event: Result, scope: string | undefined): ToolInvocation | undefined {
    const id = event.id ?? '';
    let open: ToolInvocation | undefined;
    if (id !== '') {
      const key = this.key(id, scope);
      if (this.closed.has(key)) return undefined;
      open = this.open.get(key);
    }
    // Older producers send no id: the oldest open call of the same name answers.
    if (open === undefined) {
      for (const candidate of this.open.values()) {
        if (candidate.subagent === scope && candidate.name === event.name && (id === '' || candidate.id === '')) {
          open = candidate;
          break;
        }
      }
    }
    const status = event.success ? 'succeeded' : 'failed';
    const endedAt = this.now();
    if (open === undefined) {
      // A result whose call was never seen: reported, not dropped.
      const key = id === '' ? `#${++this.anonymous}` : this.key(id, scope);
      this.closed.add(key);
      return snapshot(key, id, event.name, {}, scope, status, undefined, endedAt, event, endedAt);
    }
    this.open.delete(open.key);
    this.closed.add(open.key);
    return snapshot(
      open.key,
      open.id,
      open.name,
      open.args,
      scope,
      status,
      open.callEvent,
      open.startedAt,
      event,
      endedAt,
    );
  }
}
