import {
  isKnownEvent,
  type ActionRequest,
  type EvoEvent,
  type SubagentToolCallEvent,
  type SubagentToolResultEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type UnknownEvent,
} from '../src/events/codecs.js';

/**
 * One tool invocation as `pairToolCalls` sees it at one moment. Each snapshot
 * is a new object; a later snapshot with the same `key` supersedes it.
 */
export interface ToolInvocation {
  /**
   * Unique per invocation within a run: the JSON of `[instanceId, subagent,
   * id]` (`null` where absent), so that no id, name or instance can make two
   * scopes' keys meet; a call without an id has a number there instead.
   */
  readonly key: string;
  /** The id as on the wire; `''` when the producer sent none. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The latest arguments: the complete ones once the producer has re-sent the call. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The sub-agent that made the call; absent for the main agent's calls. */
  readonly subagent?: string;
  /** The `instance_id` of that sub-agent, where the stream has one. */
  readonly instanceId?: string;
  /**
   * `unfinished`: the stream ended before its result. `awaiting-input`: the
   * stream ended with the run asking about this call, in whichever agent (an
   * `interrupt` whose action request is this call, an `ask_user` naming it),
   * or with the sub-agent this `task` call started waiting so. A run with
   * `resume` sends a new message in the thread; it does not answer the call.
   */
  readonly status: 'running' | 'succeeded' | 'failed' | 'unfinished' | 'awaiting-input';
  /** The result's content, once it has arrived. */
  readonly result?: string;
  /** The result's `success`, once it has arrived. */
  readonly success?: boolean;
  /** The latest call event; absent only for a result whose call was never seen (made before a `--resume`). */
  readonly callEvent?: ToolCallEvent | SubagentToolCallEvent;
  /** The result event, once it has arrived. */
  readonly resultEvent?: ToolResultEvent | SubagentToolResultEvent;
  /** Scheduler time of the first call event, and of the result or the end of the stream. */
  readonly startedAt: number;
  /** Absent while the call is `running`. */
  readonly endedAt?: number;
}

type Call = ToolCallEvent | SubagentToolCallEvent;
type Result = ToolResultEvent | SubagentToolResultEvent;

/**
 * Whether two values parsed from JSON are equal, compared in place without
 * recursion: arguments nest as deep as the producer likes, and a deep value
 * must cost time, never the stack.
 */
function sameJson(first: unknown, second: unknown): boolean {
  const pending: unknown[] = [first, second];
  while (pending.length > 0) {
    const b = pending.pop();
    const a = pending.pop();
    // NaN arrives from Python's JSON and equals itself there.
    if (a === b || (Number.isNaN(a) && Number.isNaN(b))) continue;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) pending.push(a[i], b[i]);
      continue;
    }
    if (Array.isArray(b)) return false;
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    let keys = 0;
    for (const key in x) {
      if (!Object.hasOwn(y, key)) return false;
      pending.push(x[key], y[key]);
      keys++;
    }
    for (const _ in y) keys--;
    if (keys !== 0) return false;
  }
  return true;
}

/** How many closed keys are remembered (in two generations) to recognise re-sends of finished calls. */
const REMEMBERED_CLOSED = 1 << 16;

/**
 * Keys of recently closed invocations, bounded: older producers re-sent a
 * finished call shortly after its result, never long after, and a run of
 * millions of calls must not hold a key for each.
 */
class RecentKeys {
  private current = new Set<string>();
  private previous = new Set<string>();

  has(key: string): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  add(key: string): void {
    if (this.current.size >= REMEMBERED_CLOSED) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(key);
  }
}

/** The scope of a call: who made it. */
interface Scope {
  readonly subagent: string | undefined;
  readonly instanceId: string | undefined;
}

const MAIN: Scope = { subagent: undefined, instanceId: undefined };

function scopeOf(event: Call | Result): Scope {
  if (event.type === 'tool_call' || event.type === 'tool_result') return MAIN;
  const instance = event.instance_id;
  return { subagent: event.subagent, instanceId: instance === undefined || instance === '' ? undefined : instance };
}

/** A string JSON writes as it is, between quotes: no quote, backslash, control character or surrogate. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** A string as JSON: most ids and names are plain, and quoting them needs no serialiser. */
function quoted(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * An invocation's key: the JSON tuple `[instanceId, subagent, id]`, so that
 * no id, name or instance can make two scopes' keys meet. Written piece by
 * piece: a key is made for every call and result.
 */
function keyOf(scope: Scope, id: string | number): string {
  const tail = typeof id === 'number' ? `${id}]` : `${quoted(id)}]`;
  if (scope === MAIN) return `[null,null,${tail}`;
  const { instanceId, subagent } = scope;
  return `[${instanceId === undefined ? 'null' : quoted(instanceId)},${subagent === undefined ? 'null' : quoted(subagent)},${tail}`;
}

/**
 * The pairing state of one run: calls and results in, `ToolInvocation`
 * snapshots out. Shared by `pairToolCalls` and `summarize` so both pair the
 * same way from one pass over the events.
 *
 * A call is keyed by its id within its scope: the main agent, or a sub-agent
 * by `instance_id` (two sub-agents may both send `call_0`), else by name. A
 * result pairs with the open call of its key; one without an id with the
 * oldest open call of that name in that scope. A call sent again with the
 * same id is the same invocation, the latest `args` winning. Memory is the
 * open calls plus a bounded window of recently closed keys.
 */
export class ToolCallTracker {
  /** Open invocations by key, in the order they opened. */
  private readonly open = new Map<string, ToolInvocation>();
  private readonly closed = new RecentKeys();
  private anonymous = 0;
  /** Main-agent calls the run stopped to ask about: by id (`ask_user.tool_call_id`), else the `ask_user` calls. */
  private readonly askedIds = new Set<string>();
  private askedAnonymously = false;
  /** The action requests of the run's approvals: each ties to the open calls with its name and args. */
  private readonly requests: ActionRequest[] = [];
  /** The `task` call that started each running sub-agent instance. */
  private readonly taskOfInstance = new Map<string, string>();

  /** Recent results whose call was not seen (yet): a call that follows fills in its arguments. */
  private readonly orphans = new Map<string, ToolInvocation>();

  constructor(private readonly now: () => number) {}

  /** Feeds one event; returns the snapshot it produced, if any. */
  push(event: EvoEvent | UnknownEvent): ToolInvocation | undefined {
    return isKnownEvent(event) ? this.take(event) : undefined;
  }

  /** `push` for an event already known not to be an `UnknownEvent`. */
  take(event: EvoEvent): ToolInvocation | undefined {
    switch (event.type) {
      case 'tool_call':
      case 'subagent_tool_call':
        return this.call(event);
      case 'tool_result':
      case 'subagent_tool_result':
        return this.result(event);
      case 'ask_user':
        if (event.tool_call_id !== '') this.askedIds.add(event.tool_call_id);
        else this.askedAnonymously = true;
        return undefined;
      case 'interrupt':
        for (const request of event.action_requests) {
          if (this.requests.length < REMEMBERED_REQUESTS) this.requests.push(request);
        }
        return undefined;
      case 'subagent_start':
        if (event.instance_id && event.tool_call_id) this.taskOfInstance.set(event.instance_id, event.tool_call_id);
        return undefined;
      case 'subagent_end':
        if (event.instance_id) this.taskOfInstance.delete(event.instance_id);
        return undefined;
      default:
        return undefined;
    }
  }

  /** Closes every open invocation, in the order they opened: `awaiting-input` if the run asked about it, else `unfinished`. */
  finish(): ToolInvocation[] {
    return this.close(this.open.keys());
  }

  /**
   * Closes the open invocations of `keys` (those of a sub-agent that ended),
   * as `finish` closes them; keys not open are passed over.
   */
  close(keys: Iterable<string>): ToolInvocation[] {
    const endedAt = this.now();
    const waiting = this.waiting();
    const ended: ToolInvocation[] = [];
    for (const key of [...keys]) {
      const open = this.open.get(key);
      if (open === undefined) continue;
      ended.push({ ...open, status: waiting.has(key) ? 'awaiting-input' : 'unfinished', endedAt });
      this.open.delete(key);
      this.closed.add(key);
    }
    return ended;
  }

  /**
   * The keys of the open calls the run stopped to ask about. An approval's
   * request names no agent: it ties to every open call of its name and args,
   * in any agent (two sub-agents paused on the same call are both waiting),
   * else to the main agent's open calls of its name. A waiting sub-agent call
   * makes the `task` call that started its sub-agent wait too.
   */
  private waiting(): Set<string> {
    const open = [...this.open.values()];
    const keys = new Set<string>();
    for (const call of open) {
      const asked = this.askedIds.has(call.id) || (this.askedAnonymously && call.name === 'ask_user');
      if (asked && call.subagent === undefined) keys.add(call.key);
    }
    for (const request of this.requests) {
      const exact = open.filter((call) => call.name === request.name && sameJson(call.args, request.args ?? {}));
      const named = exact.length > 0 ? exact : open.filter((c) => c.subagent === undefined && c.name === request.name);
      for (const call of named) keys.add(call.key);
    }
    for (const call of open) {
      const task = call.instanceId === undefined ? undefined : this.taskOfInstance.get(call.instanceId);
      if (task !== undefined && keys.has(call.key)) keys.add(keyOf(MAIN, task));
    }
    return keys;
  }

  private call(event: Call): ToolInvocation | undefined {
    const scope = scopeOf(event);
    // An empty id cannot be matched to a re-send: each such call is its own invocation.
    const key = event.id === '' ? keyOf(MAIN, ++this.anonymous) : keyOf(scope, event.id);
    if (this.closed.has(key)) {
      // Its result came first: the call completes the invocation with what it was asked.
      const orphan = this.orphans.get(key);
      if (orphan === undefined) return undefined;
      this.orphans.delete(key);
      return { ...orphan, name: event.name, args: event.args, callEvent: event };
    }
    const open = this.open.get(key);
    if (open) {
      if (sameJson(open.args, event.args)) return undefined;
      const updated: ToolInvocation = { ...open, args: event.args, callEvent: event };
      this.open.set(key, updated);
      return updated;
    }
    const opened = openedBy(key, event, scope, this.now());
    this.open.set(key, opened);
    return opened;
  }

  private keepOrphan(key: string, orphan: ToolInvocation): void {
    this.orphans.set(key, orphan);
    if (this.orphans.size > REMEMBERED_ORPHANS) this.orphans.delete(this.orphans.keys().next().value!);
  }

  private result(event: Result): ToolInvocation | undefined {
    const scope = scopeOf(event);
    const id = event.id ?? '';
    let open: ToolInvocation | undefined;
    if (id !== '') {
      const key = keyOf(scope, id);
      open = this.open.get(key);
      // A key is open or closed, never both: the small map of open calls answers most results alone.
      if (open === undefined && this.closed.has(key)) return undefined;
    }
    // Older producers send no id: the oldest open call of the same name answers.
    if (open === undefined) {
      for (const candidate of this.open.values()) {
        if (
          candidate.subagent === scope.subagent &&
          candidate.instanceId === scope.instanceId &&
          candidate.name === event.name &&
          (id === '' || candidate.id === '')
        ) {
          open = candidate;
          break;
        }
      }
    }
    const status = event.success ? 'succeeded' : 'failed';
    const endedAt = this.now();
    if (open === undefined) {
      // A result whose call this stream never showed (it was made before a `--resume`): an invocation of its own.
      const key = id === '' ? keyOf(MAIN, ++this.anonymous) : keyOf(scope, id);
      this.closed.add(key);
      const orphan: ToolInvocation = {
        key,
        id,
        name: event.name,
        args: {},
        ...scopeFields(scope),
        status,
        startedAt: endedAt,
        result: event.content,
        success: event.success,
        resultEvent: event,
        endedAt,
      };
      if (id !== '') this.keepOrphan(key, orphan);
      return orphan;
    }
    this.open.delete(open.key);
    this.closed.add(open.key);
    return closedBy(open, event, status, endedAt);
  }
}

/** How many action requests are remembered: a run stops at its first approvals, so a few are all there are. */
const REMEMBERED_REQUESTS = 1024;

/** How many orphan results are remembered, oldest forgotten first: a call after that many others is not paired with its result. */
export const REMEMBERED_ORPHANS = 1024;

/** The fields of a sub-agent's scope, for the rare snapshots built by spreading. */
function scopeFields(scope: Scope): Pick<ToolInvocation, 'subagent' | 'instanceId'> {
  const { subagent, instanceId } = scope;
  if (subagent === undefined) return {};
  return instanceId === undefined ? { subagent } : { subagent, instanceId };
}

/*
 * Snapshots leave out the fields they have no value for, rather than set them
 * to `undefined`, so that one equals, in a test's `deepStrictEqual`, the
 * object the test writes. Each is one object literal per kind of scope, not
 * built key by key nor spread and extended: every call and result makes one,
 * and a literal is what V8 allocates fastest, in few shapes.
 */

/** The first snapshot of a call. */
function openedBy(key: string, callEvent: Call, scope: Scope, startedAt: number): ToolInvocation {
  const { id, name, args } = callEvent;
  const status = 'running';
  const { subagent, instanceId } = scope;
  if (subagent === undefined) return { key, id, name, args, status, callEvent, startedAt };
  if (instanceId === undefined) return { key, id, name, args, subagent, status, callEvent, startedAt };
  return { key, id, name, args, subagent, instanceId, status, callEvent, startedAt };
}

/** The snapshot of an open call whose result has come. */
function closedBy(
  open: ToolInvocation,
  resultEvent: Result,
  status: ToolInvocation['status'],
  endedAt: number,
): ToolInvocation {
  const { key, id, name, args, subagent, instanceId, callEvent, startedAt } = open;
  const { content: result, success } = resultEvent;
  // Every open invocation came from a call; the spread only keeps the types whole.
  if (callEvent === undefined) return { ...open, status, result, success, resultEvent, endedAt };
  if (subagent === undefined) {
    return { key, id, name, args, status, callEvent, startedAt, result, success, resultEvent, endedAt };
  }
  if (instanceId === undefined) {
    return { key, id, name, args, subagent, status, callEvent, startedAt, result, success, resultEvent, endedAt };
  }
  return {
    key,
    id,
    name,
    args,
    subagent,
    instanceId,
    status,
    callEvent,
    startedAt,
    result,
    success,
    resultEvent,
    endedAt,
  };
}
