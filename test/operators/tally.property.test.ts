// The run model's one-switch path, with its summary,, held to the rules of `RunSummary` applied one at
// a time, on arbitrary runs: ids that collide across agents, quotes and lone
// surrogates in ids and names, results before calls, questions, panels.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EvoEvent, UnknownEvent } from '../../src/index.js';
import type { InvocationSummary, PanelDispatchSummary, RunSummary } from '../../operators/index.js';
import type { Delegation } from '../../operators/delegations.js';
import { DelegationTracker } from '../../operators/DelegationTracker.js';
import { RunModel } from '../../operators/RunModel.js';
import { ToolCallTracker, type ToolInvocation } from '../../operators/ToolCallTracker.js';
import { events as ev } from '../../testing/index.js';

const id = fc.constantFrom('', 'c1', 'c2', 'c"3', 'c\\4', '\ud83d', 'é');
const name = fc.constantFrom('task', 'ls', 'ask_user', 'code_interpreter');
const agent = fc.constantFrom('code-agent', 'sub-agent', 'a"b');
const instance = fc.constantFrom(undefined, 'i1', 'i2', 'i"3', '\udc00');
const args = fc.oneof(
  fc.constant({}),
  fc.record({ subagent_type: agent, description: fc.constantFrom('', 'd') }),
  fc.record({ path: fc.constantFrom('.', 'a') }),
);

const event: fc.Arbitrary<EvoEvent | UnknownEvent> = fc.oneof(
  { arbitrary: fc.string().map((s) => ev.text(s)), weight: 4 },
  fc.string().map((s) => ev.thinking(s)),
  fc.tuple(agent, fc.string(), instance).map(([a, s, i]) => ev.subagentText(a, s, { instanceId: i })),
  { arbitrary: fc.tuple(name, args, id).map(([n, a, i]) => ev.toolCall(n, a, { id: i })), weight: 3 },
  {
    arbitrary: fc
      .tuple(name, fc.string(), fc.boolean(), fc.option(id, { nil: undefined }))
      .map(([n, content, success, i]) => ev.toolResult(n, content, { success, id: i })),
    weight: 3,
  },
  fc
    .tuple(agent, name, args, id, instance)
    .map(([a, n, g, i, s]) => ev.subagentToolCall(a, n, g, { id: i, instanceId: s })),
  fc
    .tuple(agent, name, fc.boolean(), fc.option(id, { nil: undefined }), instance)
    .map(([a, n, success, i, s]) => ev.subagentToolResult(a, n, 'r', { success, id: i, instanceId: s })),
  fc
    .tuple(agent, instance, fc.option(id, { nil: undefined }))
    .map(([a, s, t]) => ev.subagentStart(a, { instanceId: s, toolCallId: t })),
  fc.tuple(agent, instance).map(([a, s]) => ev.subagentEnd(a, { instanceId: s })),
  fc.tuple(fc.nat(99), fc.nat(99)).map(([i, o]) => ev.usage(i, o)),
  fc.string().map((s) => ev.done(s)),
  fc.string().map((s) => ev.error(s)),
  fc.tuple(name, args).map(([n, a]) => ev.interrupt('q', [{ name: n, args: a }])),
  id.map((i) => ev.askUser('q', [], { toolCallId: i })),
  fc.constantFrom('heartbeat', 'text_delta', '1').map((t) => ev.unknown(t)),
  fc.tuple(id, id).map(([i, e]) => ev.panelDispatchStart(i, { evalId: e })),
  fc.tuple(id, fc.nat(9)).map(([i, ms]) => ev.panelDispatchComplete(i, ms)),
  fc.tuple(id, fc.nat(9)).map(([i, ms]) => ev.panelDispatchError(i, 'x', ms)),
);

/** The last snapshot of each invocation, in first-seen order, as a summary has it: no events, the result only when it failed. */
function invocationSummaries(snapshots: readonly ToolInvocation[]): InvocationSummary[] {
  const last = new Map<string, ToolInvocation>();
  for (const s of snapshots) last.set(s.key, s);
  return [...last.values()]
    .filter((i) => i.status !== 'running')
    .map(({ key, id, name, args, subagent, instanceId, status, result, startedAt, endedAt }) => ({
      ...{ key, id, name, args, subagent, instanceId, status },
      error: status === 'failed' ? result : undefined,
      ...{ startedAt, endedAt },
    }));
}

/** Panel dispatches by the rule: a start opens one, a completion or error closes it (or one never announced). */
function panelSummaries(events: readonly (EvoEvent | UnknownEvent)[]): PanelDispatchSummary[] {
  const panels = new Map<string, PanelDispatchSummary>();
  for (const e of events) {
    if (e.type === 'panel_dispatch_start') {
      const { id, eval_id: evalId, subagent_type: subagentType, label, description } = e;
      panels.set(id, { id, evalId, subagentType, label, description, status: 'unfinished' });
    } else if (e.type === 'panel_dispatch_complete' || e.type === 'panel_dispatch_error') {
      const known = panels.get(e.id) ?? {
        ...{ id: e.id, evalId: e.eval_id, subagentType: '', label: '', description: '' },
        status: 'unfinished' as const,
      };
      const ended = { ...known, durationMs: e.duration_ms };
      panels.set(
        e.id,
        e.type === 'panel_dispatch_error'
          ? { ...ended, status: 'failed', error: e.error }
          : {
              ...ended,
              status: 'completed',
            },
      );
    }
  }
  return [...panels.values()];
}

/** The summary with each rule applied on its own, both trackers fed every event. */
function reference(events: readonly (EvoEvent | UnknownEvent)[]): RunSummary {
  const tools = new ToolCallTracker(() => 0);
  const delegations: Delegation[] = [];
  const snapshots: ToolInvocation[] = [];
  // A sub-agent's calls still open when it ends close with it.
  const openIn = new Map<Delegation, Set<string>>();
  let routedTo: Delegation | undefined;
  const subagents = new DelegationTracker({
    start: (d) => delegations.push(d),
    event: (d) => (routedTo = d),
    end: (d) => snapshots.push(...tools.close(openIn.get(d) ?? [])),
  });
  const counts: Record<string, number> = {};
  let text = '';
  let gates: EvoEvent[] = [];
  for (const e of events) {
    const type = e.type === 'unknown' ? e.wireType : e.type;
    counts[type] = (counts[type] ?? 0) + 1;
    const snapshot = tools.push(e);
    if (snapshot) snapshots.push(snapshot);
    routedTo = undefined;
    subagents.push(e);
    if (snapshot?.status === 'running' && routedTo !== undefined) {
      for (const keys of openIn.values()) keys.delete(snapshot.key);
      openIn.set(routedTo, (openIn.get(routedTo) ?? new Set()).add(snapshot.key));
    }
    if (e.type === 'text') text += e.content;
    if (e.type === 'interrupt' || e.type === 'ask_user') gates = [...gates, e];
    else if (e.type === 'text' || e.type.endsWith('tool_call') || e.type.endsWith('tool_result')) gates = [];
  }
  snapshots.push(...tools.finish());
  subagents.finish();
  const only = <T extends EvoEvent['type']>(t: T) =>
    events.filter((e): e is Extract<EvoEvent, { type: T }> => e.type === t);
  const done = only('done').at(-1);
  const errors = only('error').map((e) => e.message);
  const [inputTokens, outputTokens] = only('usage_stats').reduce(
    ([i, o], e) => [i + e.input_tokens, o + e.output_tokens],
    [0, 0],
  );
  return {
    outcome:
      errors.length > 0 ? 'failed' : done === undefined ? 'incomplete' : gates.length > 0 ? 'needs-input' : 'completed',
    response: done?.response,
    text,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    invocations: invocationSummaries(snapshots),
    delegations: delegations.map(({ ending: _, open: __, ...d }) => d),
    panelDispatches: panelSummaries(events),
    errors,
    interrupts: only('interrupt'),
    questions: only('ask_user'),
    pendingApprovals: gates.filter((g) => g.type === 'interrupt'),
    pendingQuestions: gates.filter((g) => g.type === 'ask_user'),
    counts,
    events: events.length,
  };
}

describe('RunModel with a summary', () => {
  it('gives the summary of the rules applied one at a time, on any run', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        const tally = new RunModel(() => 0, { summary: true });
        for (const e of events) tally.push(e);
        expect(tally.summary()).toEqual(reference(events));
      }),
      { numRuns: 400 },
    );
  });

  it('keys each invocation by the JSON of [instanceId, subagent, id], whatever the ids hold', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const tally = new RunModel(() => 0, { summary: true });
        for (const e of events) tally.push(e);
        for (const i of tally.summary().invocations) {
          const expected = JSON.stringify([i.instanceId ?? null, i.subagent ?? null, i.id]);
          // A call without an id is numbered instead.
          if (i.id !== '') expect(i.key).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives the deltas joined as its text, whether or not the response repeats them', () => {
    // Past 512 deltas the tally joins them a batch at a time.
    const delta = fc.string({ unit: 'binary', maxLength: 3 });
    const deltas = fc.oneof(fc.array(delta, { maxLength: 20 }), fc.array(delta, { minLength: 500, maxLength: 1100 }));
    const responseOf = fc.constantFrom<(joined: string, parts: string[]) => string>(
      (joined) => joined,
      (joined) => (joined === '' ? '' : `${joined.slice(0, -1)}${joined.endsWith('x') ? 'y' : 'x'}`),
      (_, parts) => [...parts].reverse().join(''),
      (joined) => `${joined}x`,
      (joined) => joined.slice(1),
    );
    fc.assert(
      fc.property(deltas, responseOf, (parts, respond) => {
        const tally = new RunModel(() => 0, { summary: true });
        for (const part of parts) tally.push(ev.text(part));
        const joined = parts.join('');
        tally.push(ev.done(respond(joined, parts)));
        const summary = tally.summary();
        expect(summary.text).toBe(joined);
        expect(summary.response).toBe(respond(joined, parts));
      }),
      { numRuns: 200 },
    );
  });
});
