import { connect, count, filter, map, merge, mergeMap, of, share, type OperatorFunction } from 'rxjs';
import type { EvoEvent } from '../src/events/EvoEvent.js';
import type { UnknownEvent } from '../src/events/UnknownEvent.js';
import { accumulateText } from '../operators/accumulateText.js';
import { groupSubagents } from '../operators/groupSubagents.js';
import { ofType } from '../operators/ofType.js';
import { pairToolCalls } from '../operators/pairToolCalls.js';
import { summarize } from '../operators/summarize.js';
import { sumUsage } from '../operators/sumUsage.js';
import type { ViewAction } from './ViewAction.js';

/**
 * The changes a live view shows, from one subscription to the run: the
 * library's operators side by side over the shared event stream. Main-agent
 * `task` calls are left out of the tools: they are the delegations. Sub-agent
 * tools are paired inside each delegation's own `events$`, so two parallel
 * sub-agents of the same name keep their tools apart.
 */
export function viewActions(): OperatorFunction<EvoEvent | UnknownEvent, ViewAction> {
  return connect((events$) =>
    merge(
      events$.pipe(ofType('thinking'), map((e): ViewAction => ({ kind: 'thinking', content: e.content }))),
      events$.pipe(accumulateText(), map((text): ViewAction => ({ kind: 'text', text }))),
      events$.pipe(
        ofType('tool_call', 'tool_result'),
        // A `task` call is a delegation: the sub-agent tree shows it.
        filter((e) => e.name !== 'task'),
        pairToolCalls(),
        map((invocation): ViewAction => ({ kind: 'tool', invocation })),
      ),
      events$.pipe(
        groupSubagents(),
        mergeMap((delegation) => {
          const own$ = delegation.events$.pipe(share());
          return merge(
            of<ViewAction>({ kind: 'subagent-start', delegation }),
            own$.pipe(pairToolCalls(), map((invocation): ViewAction => ({ kind: 'tool', invocation, delegation }))),
            own$.pipe(count(), map((events): ViewAction => ({ kind: 'subagent-end', delegation, events }))),
          );
        }),
      ),
      events$.pipe(sumUsage(), map((usage): ViewAction => ({ kind: 'usage', usage }))),
      events$.pipe(ofType('error'), map((event): ViewAction => ({ kind: 'error', event }))),
      events$.pipe(summarize(), map((summary): ViewAction => ({ kind: 'summary', summary }))),
    ),
  );
}
