import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { AskUserEvent } from '../src/events/AskUserEvent.js';
import type { EvoEvent } from '../src/events/EvoEvent.js';
import type { EvoEventType } from '../src/events/EvoEventType.js';
import type { SubagentToolCallEvent } from '../src/events/SubagentToolCallEvent.js';
import type { SubagentToolResultEvent } from '../src/events/SubagentToolResultEvent.js';
import type { ToolCallEvent } from '../src/events/ToolCallEvent.js';
import type { ToolResultEvent } from '../src/events/ToolResultEvent.js';
import type { InterruptEvent } from '../src/events/InterruptEvent.js';
import type { UnknownEvent } from '../src/events/UnknownEvent.js';
import type { Delegation } from './Delegation.js';
import { DelegationTracker } from './DelegationTracker.js';
import type { InvocationSummary } from './InvocationSummary.js';
import type { RunSummary } from './RunSummary.js';
import { ToolCallTracker } from './ToolCallTracker.js';
import type { ToolInvocation } from './ToolInvocation.js';

const TEXT_BATCH = 512;

/**
 * One `RunSummary` when the source completes: the final response, usage
 * totals, every tool invocation in its final state (without its output, which
 * `pairToolCalls` gives as it comes), every delegation with its
 * event count, errors, interrupts and questions, and event counts by type.
 * It pairs and groups in the same single pass as `pairToolCalls` and
 * `groupSubagents`, so it subscribes to the source once.
 *
 * An error of the source is passed on and no summary is emitted; to summarize
 * a failed run, catch first: `run$.pipe(catchError(() => EMPTY), summarize())`.
 *
 * ```ts
 * const summary = await lastValueFrom(run$.pipe(summarize()));
 * console.log(summary.response, summary.usage.totalTokens, summary.invocations.length);
 * ```
 *
 * ```
 * source:      --t--c--r--u--d--|
 * summarize(): -----------------(s|)
 * ```
 */
export function summarize(options: { readonly scheduler?: SchedulerLike } = {}): OperatorFunction<EvoEvent | UnknownEvent, RunSummary> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<RunSummary>((subscriber) => {
      // An invocation's slot is taken when it opens, to keep first-seen order; its
      // summary is built once, when it closes: while open, the tracker holds it.
      const invocations = new Map<string, InvocationSummary | undefined>();
      const keep = (i: ToolInvocation) => {
        if (i.status === 'running') {
          if (!invocations.has(i.key)) invocations.set(i.key, undefined);
          return;
        }
        invocations.set(i.key, {
          key: i.key,
          id: i.id,
          name: i.name,
          args: i.args,
          subagent: i.subagent,
          status: i.status,
          error: i.status === 'failed' ? i.result : undefined,
          startedAt: i.startedAt,
          endedAt: i.endedAt,
        });
      };
      const delegations: Delegation[] = [];
      const tools = new ToolCallTracker(() => scheduler.now());
      const subagents = new DelegationTracker({
        start: (delegation) => delegations.push(delegation),
        event: () => undefined,
        end: () => undefined,
      });
      const counts: Record<EvoEventType, number> = {
        thinking: 0,
        text: 0,
        tool_call: 0,
        tool_result: 0,
        subagent_start: 0,
        subagent_tool_call: 0,
        subagent_tool_result: 0,
        subagent_text: 0,
        subagent_end: 0,
        tool_selection: 0,
        summarization_start: 0,
        summarization: 0,
        usage_stats: 0,
        interrupt: 0,
        ask_user: 0,
        error: 0,
        done: 0,
      };
      const unknown = new Map<string, number>();
      const tool = (event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent) => {
        const snapshot = tools.push(event);
        if (snapshot) keep(snapshot);
        subagents.push(event);
      };
      const errors: string[] = [];
      const interrupts: InterruptEvent[] = [];
      const questions: AskUserEvent[] = [];
      let response: string | undefined;
      // Deltas are joined a batch at a time: one rope node per delta would keep
      // hundreds of thousands of small strings alive until the end.
      const textParts: string[] = [];
      let deltas: string[] = [];
      let inputTokens = 0;
      let outputTokens = 0;
      let events = 0;

      return source.subscribe({
        next: (raw) => {
          const event = raw as EvoEvent;
          events++;
          // Counted by named property in each case: a map keyed by the type string
          // would hash a fresh string for every event, and most events are text.
          switch (event.type) {
            case 'text':
              counts.text++;
              if (deltas.push(event.content) === TEXT_BATCH) {
                textParts.push(deltas.join(''));
                deltas = [];
              }
              return;
            case 'thinking':
              counts.thinking++;
              return;
            case 'usage_stats':
              counts.usage_stats++;
              inputTokens += event.input_tokens;
              outputTokens += event.output_tokens;
              return;
            case 'done':
              counts.done++;
              response = event.response;
              return;
            case 'error':
              counts.error++;
              errors.push(event.message);
              return;
            case 'interrupt':
              counts.interrupt++;
              interrupts.push(event);
              return;
            case 'ask_user':
              counts.ask_user++;
              questions.push(event);
              return;
            case 'tool_call':
              counts.tool_call++;
              return tool(event);
            case 'tool_result':
              counts.tool_result++;
              return tool(event);
            case 'subagent_tool_call':
              counts.subagent_tool_call++;
              return tool(event);
            case 'subagent_tool_result':
              counts.subagent_tool_result++;
              return tool(event);
            case 'subagent_start':
              counts.subagent_start++;
              return subagents.push(event);
            case 'subagent_end':
              counts.subagent_end++;
              return subagents.push(event);
            case 'subagent_text':
              counts.subagent_text++;
              return subagents.push(event);
            case 'tool_selection':
              counts.tool_selection++;
              return;
            case 'summarization_start':
              counts.summarization_start++;
              return;
            case 'summarization':
              counts.summarization++;
              return;
            default: {
              const type = (raw as { type: string }).type;
              unknown.set(type, (unknown.get(type) ?? 0) + 1);
            }
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          for (const snapshot of tools.finish()) keep(snapshot);
          const open = new Set(delegations.filter((d) => d.open));
          subagents.finish();
          subscriber.next({
            response,
            text: textParts.join('') + deltas.join(''),
            usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
            invocations: [...invocations.values()].filter((i): i is InvocationSummary => i !== undefined),
            delegations: delegations.map((d) => ({
              key: d.key,
              name: d.name,
              description: d.description,
              taskCallId: d.taskCallId,
              events: d.events,
              ended: !open.has(d),
            })),
            errors,
            interrupts,
            questions,
            counts: Object.fromEntries([...Object.entries(counts).filter(([, n]) => n > 0), ...unknown]),
            events,
          });
          subscriber.complete();
        },
      });
    });
}
