import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { AskUserEvent } from '../src/events/AskUserEvent.js';
import type { EvoEvent } from '../src/events/EvoEvent.js';
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
      const counts = new Map<string, number>();
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
          counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
          switch (event.type) {
            case 'text':
              if (deltas.push(event.content) === TEXT_BATCH) {
                textParts.push(deltas.join(''));
                deltas = [];
              }
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
              if (snapshot) keep(snapshot);
              subagents.push(event);
              return;
            }
            case 'subagent_start':
            case 'subagent_end':
            case 'subagent_text':
              subagents.push(event);
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
            counts: Object.fromEntries(counts),
            events,
          });
          subscriber.complete();
        },
      });
    });
}
