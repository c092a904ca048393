import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, map, type MonoTypeOperatorFunction } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl, type EvoEvent, type UnknownEvent } from '../../src/index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { traceRun } from '../../otel/index.js';
import { fixtureBytes } from '../support/collect.js';
import { memoryTracing, SpanTree } from './support.js';

const transcripts = [
  'research-run.jsonl', // two research-agent delegations in parallel, panel dispatches
  'error-run.jsonl',
  'needs-input-ask.jsonl',
  'needs-input-approval.jsonl',
  'legacy-run.jsonl',
  'resumed-run.jsonl',
  'contract-example.jsonl',
  'examples/transcripts/demo-run.jsonl',
];

/**
 * How the trace meets the summary: `summarize()` right after `traceRun()`
 * (the trace follows the summary's tally), or with an operator between them
 * (the trace keeps a tally of its own). The tree must not tell them apart.
 */
const ways: Record<string, MonoTypeOperatorFunction<EvoEvent | UnknownEvent>> = {
  'one tally': (events$) => events$,
  'two tallies': map((event) => event),
};

/** A fixture traced and summarized; the operator passes every event on. */
async function traced(name: string, way = 'one tally'): Promise<{ summary: RunSummary; tree: SpanTree }> {
  const { provider, spans } = memoryTracing();
  const summary = await lastValueFrom(
    fromJsonl(fixtureBytes(name)).pipe(traceRun({ tracerProvider: provider }), ways[way]!, summarize()),
  );
  return { summary, tree: new SpanTree(spans()) };
}

/** A tree as names, attributes and parents, without its times and ids. */
function shape(tree: SpanTree): string[] {
  const path = (span: ReadableSpan | undefined): string => (span ? `${path(tree.parentOf(span))}/${span.name}` : '');
  return tree.spans
    .map((span) => {
      const { 'evosci.panel.duration_ms': _, ...attributes } = span.attributes;
      return JSON.stringify([path(span), attributes, span.status]);
    })
    .sort();
}

const sorted = <T>(values: T[]): T[] => values.map((v) => JSON.stringify(v)).sort() as T[];
const op = (span: ReadableSpan) => span.attributes['gen_ai.operation.name'];

describe.each(transcripts)('the span tree of %s', (name) => {
  it("is the same whether the trace follows the summary's tally or keeps its own", async () => {
    const one = await traced(name, 'one tally');
    const two = await traced(name, 'two tallies');
    expect(shape(one.tree)).toEqual(shape(two.tree));
    const timeless = ({ invocations, ...rest }: RunSummary) => ({
      ...rest,
      invocations: invocations.map(({ startedAt: _, endedAt: __, ...i }) => i),
    });
    expect(timeless(one.summary)).toEqual(timeless(two.summary));
  });

  it("has summarize()'s outcome and usage on one root invoke_agent span", async () => {
    const { summary, tree } = await traced(name);
    const [root, ...others] = tree.roots();
    expect(others).toEqual([]);
    expect(root!.name).toBe('invoke_agent EvoScientist');
    expect(root!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'EvoScientist',
      'gen_ai.usage.input_tokens': summary.usage.inputTokens,
      'gen_ai.usage.output_tokens': summary.usage.outputTokens,
      'evosci.run.outcome': summary.outcome,
    });
    expect(root!.status.code).toBe(summary.outcome === 'failed' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET);
    if (summary.outcome === 'failed') expect(root!.status.message).toBe(summary.errors[0]);
  });

  it("has an execute_tool span per invocation, with summarize()'s names, ids, statuses and parents", async () => {
    const { summary, tree } = await traced(name);
    const tools = tree.where({ 'gen_ai.operation.name': 'execute_tool' });
    expect(
      sorted(tools.map((s) => [s.name, s.attributes['gen_ai.tool.call.id'] ?? '', s.attributes['evosci.tool.status']])),
    ).toEqual(sorted(summary.invocations.map((i) => [`execute_tool ${i.name}`, i.id, i.status])));
    const [root] = tree.roots();
    for (const span of tools) {
      const failed = span.attributes['evosci.tool.status'] === 'failed';
      expect(span.status.code).toBe(failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET);
      const parent = tree.parentOf(span)!;
      if (span.attributes['evosci.subagent.name'] === undefined) {
        expect(parent).toBe(root);
        continue;
      }
      // A sub-agent's call nests in its delegation's span.
      expect(op(parent)).toBe('invoke_agent');
      expect(parent).not.toBe(root);
      const instance = span.attributes['evosci.subagent.instance_id'];
      if (instance !== undefined) expect(parent.attributes['evosci.subagent.instance_id']).toBe(instance);
    }
  });

  it("has an invoke_agent span per delegation, under its task call's span", async () => {
    const { summary, tree } = await traced(name);
    const [root] = tree.roots();
    const delegations = tree
      .where({ 'gen_ai.operation.name': 'invoke_agent' })
      .filter((s) => s !== root && s.attributes['evosci.panel.id'] === undefined);
    expect(sorted(delegations.map((s) => [s.name, s.attributes['evosci.subagent.ended']]))).toEqual(
      sorted(summary.delegations.map((d) => [`invoke_agent ${d.subagentType ?? d.name}`, d.ended])),
    );
    for (const delegation of summary.delegations) {
      const span = delegations.find(
        (s) =>
          s.attributes['evosci.subagent.instance_id'] === delegation.instanceId || delegation.instanceId === undefined,
      )!;
      const task = summary.invocations.find((i) => i.name === 'task' && i.id === delegation.taskCallId);
      if (delegation.instanceId === undefined || task === undefined) continue;
      expect(tree.parentOf(span)).toBe(tree.one({ 'gen_ai.tool.call.id': task.id }));
    }
  });

  it('has an invoke_agent span per panel dispatch, under its code_interpreter call', async () => {
    const { summary, tree } = await traced(name);
    const panels = tree.spans.filter((s) => s.attributes['evosci.panel.id'] !== undefined);
    expect(panels).toHaveLength(summary.panelDispatches.length);
    for (const dispatch of summary.panelDispatches) {
      const span = tree.one({ 'evosci.panel.id': dispatch.id });
      expect(span.name).toBe(`invoke_agent ${dispatch.subagentType}`);
      expect(span.attributes['evosci.panel.status']).toBe(dispatch.status);
      expect(span.status.code).toBe(dispatch.status === 'failed' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET);
      expect(tree.parentOf(span)).toBe(tree.one({ 'gen_ai.tool.call.id': dispatch.evalId }));
      expect(tree.parentOf(span)!.name).toBe('execute_tool code_interpreter');
    }
  });
});

describe('the fixtures cover', () => {
  it('parallel delegations of one sub-agent type, panel dispatches, and calls left awaiting input', async () => {
    const research = await traced('research-run.jsonl');
    expect(research.tree.where({ 'gen_ai.agent.name': 'research-agent', 'evosci.subagent.ended': true })).toHaveLength(
      2,
    );
    expect(research.summary.panelDispatches.length).toBeGreaterThan(0);
    for (const name of ['needs-input-ask.jsonl', 'needs-input-approval.jsonl']) {
      const { tree } = await traced(name);
      expect(tree.where({ 'evosci.tool.status': 'awaiting-input' }).length).toBeGreaterThan(0);
    }
  });
});
