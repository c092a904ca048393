import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { AskUserEvent } from '../src/events/AskUserEvent.js';
import type { EvoEvent } from '../src/events/EvoEvent.js';
import type { InterruptEvent } from '../src/events/InterruptEvent.js';
import type { UnknownEvent } from '../src/events/UnknownEvent.js';
import type { Delegation } from './Delegation.js';
import { DelegationTracker } from './DelegationTracker.js';
import type { RunSummary } from './RunSummary.js';
import { ToolCallTracker } from './ToolCallTracker.js';
import type { ToolInvocation } from './ToolInvocation.js';

/**
 * One `RunSummary` when the source completes: the final response, usage
 * totals, every tool invocation in its final state, every delegation with its
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
      const invocations = new Map<string, ToolInvocation>();
      const delegations: Delegation[] = [];
      const tools = new ToolCallTracker(() => scheduler.now());
      const subagents = new DelegationTracker({
        start: (delegation) => delegations.push(delegation),
        event: () => undefined,
        end: () => undefined,
      });
      const counts: Record<string, number> = Object.create(null) as Record<string, number>;
      const errors: string[] = [];
      const interrupts: InterruptEvent[] = [];
      const questions: AskUserEvent[] = [];
      let response: string | undefined;
      let text = '';
      let inputTokens = 0;
      let outputTokens = 0;
      let events = 0;

      return source.subscribe({
        next: (raw) => {
          const event = raw as EvoEvent;
          events++;
          counts[event.type] = (counts[event.type] ?? 0) + 1;
          switch (event.type) {
            case 'text':
              text += event.content;
              return;
            case 'usage_stats':
              inputTokens += event.input_tokens;
              outputTokens += event.output_tokens;
              return;
            case 'done':
              response = event.response;
              return;
            case 'error':
              errors.push(event.message);
              return;
            case 'interrupt':
              interrupts.push(event);
              return;
            case 'ask_user':
              questions.push(event);
              return;
            case 'tool_call':
            case 'tool_result':
            case 'subagent_tool_call':
            case 'subagent_tool_result': {
              const snapshot = tools.push(event);
              if (snapshot) invocations.set(snapshot.key, snapshot);
              subagents.push(event);
              return;
            }
            default:
              subagents.push(event);
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          for (const snapshot of tools.finish()) invocations.set(snapshot.key, snapshot);
          const open = new Set(delegations.filter((d) => d.open));
          subagents.finish();
          subscriber.next({
            response,
            text,
            usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
            invocations: [...invocations.values()],
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
            counts: { ...counts },
            events,
          });
          subscriber.complete();
        },
      });
    });
}
