import { describe, expect, it } from 'vitest';
import { lastValueFrom, map, mergeMap, reduce, toArray } from 'rxjs';
import { fromJsonl } from '../../index.js';
import { accumulateText, groupSubagents, pairToolCalls, summarize, sumUsage } from '../../operators/index.js';
import { collect, fixtureBytes, fixtureTruth } from '../support/collect.js';

/** What `test/fixtures/generate.py` knows about each run it wrote, from its model rather than the wire. */
interface Truth {
  events: number;
  countsByType: Record<string, number>;
  response: string | null;
  text: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  invocations: {
    id: string;
    name: string;
    subagent: string | null;
    args: Record<string, unknown>;
    status: string;
    result: string | null;
  }[];
  delegations: { taskId: string; name: string; description: string; events: number }[];
  errors: string[];
  interrupts: string[];
  questions: string[];
}

const transcripts = [
  'contract-example.jsonl',
  'research-run.jsonl',
  'research-run.utf8-crlf.jsonl',
  'legacy-run.jsonl',
  'interrupt-approval.jsonl',
  'error-run.jsonl',
  'examples/transcripts/interrupt-run.jsonl',
  'examples/transcripts/resumed-run.jsonl',
  'examples/transcripts/demo-run.jsonl',
];

describe.each(transcripts)('operators on %s', (name) => {
  const truth = fixtureTruth<Truth>(name);
  const events$ = fromJsonl(fixtureBytes(name));

  it('summarize() reconstructs the run the generator modelled', async () => {
    const summary = await lastValueFrom(events$.pipe(summarize()));
    expect(summary.events).toBe(truth.events);
    expect(summary.counts).toEqual(truth.countsByType);
    expect(summary.response).toBe(truth.response ?? undefined);
    expect(summary.text).toBe(truth.text);
    expect(summary.usage).toEqual(truth.usage);
    expect(summary.errors).toEqual(truth.errors);
    expect(summary.interrupts.map((i) => i.interrupt_id)).toEqual(truth.interrupts);
    expect(summary.questions.map((q) => q.interrupt_id)).toEqual(truth.questions);
    expect(
      summary.invocations.map((i) => ({
        id: i.id,
        name: i.name,
        subagent: i.subagent ?? null,
        args: i.args,
        status: i.status,
      })),
    ).toEqual(truth.invocations.map(({ id, name, subagent, args, status }) => ({ id, name, subagent, args, status })));
    expect(summary.invocations.map((i) => i.error ?? null)).toEqual(
      truth.invocations.map((i) => (i.status === 'failed' ? i.result : null)),
    );
    expect(
      summary.delegations.map((d) => ({ taskId: d.taskCallId, name: d.name, description: d.description })),
    ).toEqual(truth.delegations.map(({ taskId, name, description }) => ({ taskId, name, description })));
  });

  it('groupSubagents() routes every sub-agent event to exactly one delegation', async () => {
    const runs = await lastValueFrom(
      events$.pipe(
        groupSubagents(),
        mergeMap((run) =>
          run.events$.pipe(
            toArray(),
            map((received) => ({ key: run.key, name: run.name, received })),
          ),
        ),
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
    // Delegations with a unique name get exactly their own events; same-name ones share their total.
    const byName = new Map<string, Truth['delegations']>();
    for (const d of truth.delegations) byName.set(d.name, [...(byName.get(d.name) ?? []), d]);
    for (const [delegationName, expected] of byName) {
      const got = runs.filter((r) => r.name === delegationName);
      expect(got.map((r) => r.key)).toEqual(expected.map((d) => d.taskId));
      const total = (list: { events: number }[]) => list.reduce((sum, d) => sum + d.events, 0);
      expect(total(got.map((r) => ({ events: r.received.length })))).toBe(total(expected));
      if (expected.length === 1) expect(got[0]!.received).toHaveLength(expected[0]!.events);
      // Text goes by instance_id: each delegation hears a single instance.
      for (const r of got) {
        const instances = new Set(
          r.received.flatMap((e) => (e.type === 'subagent_text' && e.instance_id !== undefined ? [e.instance_id] : [])),
        );
        expect(instances.size).toBeLessThanOrEqual(1);
      }
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
      [...last.values()].map(({ name, status, args, result }) => ({ name, status, args, result: result ?? null })),
    ).toEqual(truth.invocations.map(({ name, status, args, result }) => ({ name, status, args, result })));
  });

  it('accumulateText() and sumUsage() end at the authoritative text and the totals', async () => {
    const texts = await collect(events$.pipe(accumulateText()));
    expect(texts.at(-1) ?? '').toBe(truth.response ?? truth.text);
    const totals = await collect(events$.pipe(sumUsage()));
    expect(totals.at(-1) ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }).toEqual(truth.usage);
  });
});
