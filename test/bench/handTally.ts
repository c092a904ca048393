// The floor summarize.bench.ts and decode.bench.ts (8) measure `summarize()`
// against: one imperative loop computing the same `RunSummary` for the
// benchmarks' transcript, as a
// user would write it for that input alone (each call sent once, results with
// ids, sub-agents with instance ids, no questions or approvals).
import type { EvoEvent, UnknownEvent } from '../../src/index.js';
import type { DelegationSummary, InvocationSummary, PanelDispatchSummary, RunSummary } from '../../operators/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The main agent's call key and a sub-agent's, as `ToolInvocation.key` spells them. */
const mainKey = (id: string) => JSON.stringify([null, null, id]);
const subKey = (instance: string, subagent: string, id: string) => JSON.stringify([instance, subagent, id]);

/** A summary written by hand: one object, one `switch` per event, counters and maps, no library. */
export class HandTally {
  events = 0;
  /** The hot types counted in fields; the rest by name. */
  texts = 0;
  subagentTexts = 0;
  thinking = 0;
  readonly counts: Record<string, number> = {};
  readonly deltas: string[] = [];
  inputTokens = 0;
  outputTokens = 0;
  response: string | undefined;
  readonly errors: string[] = [];
  readonly invocations = new Map<string, Mutable<InvocationSummary>>();
  readonly tasks = new Map<string, { subagentType?: string; description?: string }>();
  readonly delegations = new Map<string, Mutable<DelegationSummary>>();
  readonly panels = new Map<string, Mutable<PanelDispatchSummary>>();

  constructor(private readonly now: () => number) {}

  /** One event, as `summarize()` takes it (or as `JSON.parse` gives it: wire types are its types). */
  push(event: EvoEvent | UnknownEvent): void {
    this.events++;
    switch (event.type) {
      case 'text':
        this.texts++;
        this.deltas.push(event.content);
        return;
      case 'subagent_text':
        this.subagentTexts++;
        this.delegations.get(String(event.instance_id))!.events++;
        return;
      case 'thinking':
        this.thinking++;
        return;
    }
    const type = event.type === 'unknown' ? event.wireType : event.type;
    this.counts[type] = (this.counts[type] ?? 0) + 1;
    switch (event.type) {
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
      case 'tool_call':
        this.call(mainKey(event.id), event.id, event.name, event.args);
        break;
      case 'tool_result':
        this.result(mainKey(event.id!), event.success, event.content);
        break;
      case 'subagent_tool_call':
        this.call(
          subKey(event.instance_id!, event.subagent, event.id),
          event.id,
          event.name,
          event.args,
          event.subagent,
          event.instance_id,
        );
        this.delegations.get(event.instance_id!)!.events++;
        break;
      case 'subagent_tool_result':
        this.result(subKey(event.instance_id!, event.subagent, event.id!), event.success, event.content);
        this.delegations.get(event.instance_id!)!.events++;
        break;
      case 'subagent_start':
        this.start(event.instance_id!, event.name, event.description, event.tool_call_id!);
        break;
      case 'subagent_end':
        this.delegations.get(event.instance_id!)!.ended = true;
        break;
      default:
        this.panel(event as EvoEvent);
    }
  }

  call(key: string, id: string, name: string, args: Readonly<Record<string, unknown>>, sub?: string, inst?: string) {
    // A field without a value is left out, as `summarize()` leaves it.
    const startedAt = this.now();
    this.invocations.set(
      key,
      sub === undefined
        ? { key, id, name, args, status: 'running', startedAt }
        : { key, id, name, args, subagent: sub, instanceId: inst!, status: 'running', startedAt },
    );
    if (name === 'task' && sub === undefined)
      this.tasks.set(id, { subagentType: text(args['subagent_type']), description: text(args['description']) });
  }

  result(key: string, success: boolean, content: string): void {
    const invocation = this.invocations.get(key)!;
    invocation.status = success ? 'succeeded' : 'failed';
    if (!success) invocation.error = content;
    invocation.endedAt = this.now();
  }

  start(instance: string, name: string, description: string, taskCallId: string): void {
    const task = this.tasks.get(taskCallId);
    const delegation: Mutable<DelegationSummary> = {
      key: instance,
      instanceId: instance,
      name,
      description: description !== '' ? description : (task?.description ?? ''),
      taskCallId,
      events: 0,
      ended: false,
    };
    if (task?.subagentType !== undefined) delegation.subagentType = task.subagentType;
    this.delegations.set(instance, delegation);
  }

  panel(event: EvoEvent): void {
    if (event.type === 'panel_dispatch_start') {
      const { id, eval_id: evalId, subagent_type: subagentType, label, description } = event;
      this.panels.set(id, { id, evalId, subagentType, label, description, status: 'unfinished' });
    } else if (event.type === 'panel_dispatch_complete') {
      Object.assign(this.panels.get(event.id)!, { durationMs: event.duration_ms, status: 'completed' });
    } else if (event.type === 'panel_dispatch_error') {
      Object.assign(this.panels.get(event.id)!, {
        durationMs: event.duration_ms,
        status: 'failed',
        error: event.error,
      });
    }
  }

  allCounts(): Record<string, number> {
    const counts = { ...this.counts };
    if (this.texts > 0) counts['text'] = this.texts;
    if (this.subagentTexts > 0) counts['subagent_text'] = this.subagentTexts;
    if (this.thinking > 0) counts['thinking'] = this.thinking;
    return counts;
  }

  summary(): RunSummary {
    const endedAt = this.now();
    for (const invocation of this.invocations.values()) {
      if (invocation.status !== 'running') continue;
      invocation.status = 'unfinished';
      invocation.endedAt = endedAt;
    }
    const failed = this.errors.length > 0;
    return {
      outcome: failed ? 'failed' : this.response === undefined ? 'incomplete' : 'completed',
      ...(this.response !== undefined && { response: this.response }),
      text: this.deltas.join(''),
      usage: {
        inputTokens: this.inputTokens,
        outputTokens: this.outputTokens,
        totalTokens: this.inputTokens + this.outputTokens,
      },
      invocations: [...this.invocations.values()],
      delegations: [...this.delegations.values()],
      panelDispatches: [...this.panels.values()],
      errors: this.errors,
      interrupts: [],
      questions: [],
      pendingApprovals: [],
      pendingQuestions: [],
      counts: this.allCounts(),
      events: this.events,
    };
  }
}

/** One pass over the events; `now` stamps calls as `summarize()`'s scheduler does. */
export function handTally(events: readonly (EvoEvent | UnknownEvent)[], now: () => number): RunSummary {
  const tally = new HandTally(now);
  for (const event of events) tally.push(event);
  return tally.summary();
}
