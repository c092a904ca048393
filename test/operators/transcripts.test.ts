import { describe, expect, it } from 'vitest';
import { lastValueFrom, map, mergeMap, reduce, toArray } from 'rxjs';
import { fromJsonl } from '../../index.js';
import {
  accumulateText,
  groupSubagents,
  pairToolCalls,
  summarize,
  sumUsage,
  type SubagentRun,
} from '../../operators/index.js';
import { collect, fixtureBytes, fixtureTruth } from '../support/collect.js';
// What the producer model knows about each run it wrote, from the model rather than the wire.
import type { Truth } from '../fixtures/producer.js';

const transcripts = [
  'contract-example.jsonl',
  'research-run.jsonl',
  'research-run.utf8-crlf.jsonl',
  'legacy-run.jsonl',
  'needs-input-ask.jsonl',
  'needs-input-approval.jsonl',
  'error-run.jsonl',
  'resumed-run.jsonl',
  'subagent-approval.jsonl',
  'examples/transcripts/parallel-approvals.jsonl',
  'examples/transcripts/interrupt-run.jsonl',
  'examples/transcripts/resumed-run.jsonl',
  'examples/transcripts/demo-run.jsonl',
];

const orNull = <T>(value: T | undefined): T | null => value ?? null;

describe.each(transcripts)('operators on %s', (name) => {
  const truth = fixtureTruth<Truth>(name);
  const events$ = fromJsonl(fixtureBytes(name));

  it('summarize() reconstructs the run the model wrote', async () => {
    const summary = await lastValueFrom(events$.pipe(summarize()));
    expect(summary.outcome).toBe(truth.outcome);
    expect(summary.events).toBe(truth.events);
    expect(summary.counts).toEqual(truth.countsByType);
    expect(orNull(summary.response)).toBe(truth.response);
    expect(summary.text).toBe(truth.text);
    expect(summary.usage).toEqual(truth.usage);
    expect(summary.errors).toEqual(truth.errors);
    expect(summary.interrupts.map((i) => i.interrupt_id)).toEqual(truth.interrupts);
    expect(summary.questions.map((q) => q.interrupt_id)).toEqual(truth.questions);
    if (truth.outcome === 'needs-input') {
      expect([...summary.pendingApprovals, ...summary.pendingQuestions].map((g) => g.interrupt_id).sort()).toEqual(
        [...truth.interrupts, ...truth.questions].sort(),
      );
    }
    expect(
      summary.invocations.map((i) => ({
        id: i.id,
        name: i.name,
        subagent: orNull(i.subagent),
        instanceId: orNull(i.instanceId),
        args: i.args,
        status: i.status,
        error: orNull(i.error),
      })),
    ).toEqual(
      truth.invocations.map(({ id, name, subagent, instanceId, args, status, result }) => ({
        id,
        name,
        subagent,
        instanceId,
        args,
        status,
        error: status === 'failed' ? result : null,
      })),
    );
    expect(
      summary.delegations.map((d) => ({
        instanceId: orNull(d.instanceId),
        taskCallId: orNull(d.taskCallId),
        name: d.name,
        subagentType: orNull(d.subagentType),
        description: d.description,
        events: d.events,
        ended: d.ended,
      })),
    ).toEqual(truth.delegations);
    expect(
      summary.panelDispatches.map((p) => ({ ...p, durationMs: orNull(p.durationMs), error: orNull(p.error) })),
    ).toEqual(truth.panelDispatches);
  });

  it('groupSubagents() gives every sub-agent event to exactly its own delegation', async () => {
    const started: SubagentRun[] = [];
    const runs = await lastValueFrom(
      events$.pipe(
        groupSubagents(),
        mergeMap((run) => {
          started.push(run);
          return run.events$.pipe(
            toArray(),
            map((received) => ({ run, received })),
          );
        }),
        toArray(),
      ),
    );
    const all = await collect(events$);
    const subagentEvents = all.filter(
      (e) => e.type === 'subagent_tool_call' || e.type === 'subagent_tool_result' || e.type === 'subagent_text',
    );
    const routed = runs.flatMap((r) => r.received);
    expect(routed).toHaveLength(subagentEvents.length);
    expect(new Set(routed).size).toBe(subagentEvents.length);
    expect(started.map((r) => [r.name, r.description, orNull(r.instanceId)])).toEqual(
      truth.delegations.map((d) => [d.name, d.description, d.instanceId]),
    );
    for (const [i, d] of truth.delegations.entries()) {
      const received = runs.find((r) => r.run === started[i])!.received;
      expect(received).toHaveLength(d.events);
      if (d.instanceId !== null) expect(received.every((e) => e.instance_id === d.instanceId)).toBe(true);
    }
  });

  it('pairToolCalls() ends with the final state of every invocation', async () => {
    const last = await lastValueFrom(
      events$.pipe(
        pairToolCalls(),
        reduce(
          (byKey, inv) => byKey.set(inv.key, inv),
          new Map<string, { status: string; args: unknown; name: string; result?: string }>(),
        ),
      ),
    );
    expect(
      [...last.values()].map(({ name, status: s, args, result }) => ({
        name,
        status: s,
        args,
        result: result ?? null,
      })),
    ).toEqual(truth.invocations.map(({ name, status: s, args, result }) => ({ name, status: s, args, result })));
  });

  it('accumulateText() and sumUsage() end at the main agent’s text and token totals', async () => {
    const texts = await collect(events$.pipe(accumulateText()));
    expect(texts.at(-1) ?? '').toBe(truth.response || truth.text);
    const totals = await collect(events$.pipe(sumUsage()));
    expect(totals.at(-1) ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }).toEqual(truth.usage);
  });
});
