// The span bookkeeping of one run, driven directly: no Observable involved.
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../index.js';
import { RunModel } from '../../operators/index.js';
import { ContentPolicy } from '../../otel/content.js';
import { RunTrace } from '../../otel/RunTrace.js';
import { events as ev } from '../../testing/index.js';
import { memoryTracing, SpanTree } from './support.js';

/** A trace fed through its own run model, as `traceRun()` feeds it without `summarize()`. */
interface FedTrace {
  push(event: EvoEvent): void;
  complete(): void;
  fail(error: unknown): void;
  close(): void;
}

function runTrace(): { run: FedTrace; tree: () => SpanTree; tick: () => void } {
  const { provider, spans } = memoryTracing();
  let now = 1_000_000;
  const model = new RunModel(() => now);
  const trace = new RunTrace(
    {
      tracer: provider.getTracer('test'),
      parent: ROOT_CONTEXT,
      metrics: undefined,
      content: new ContentPolicy(false),
      agentName: 'EvoScientist',
      rootAttributes: {},
      now: () => now,
    },
    model,
  );
  const run: FedTrace = {
    push: (event) => void model.push(event),
    complete: () => trace.complete(),
    fail: (error) => trace.fail(error),
    close: () => trace.close(),
  };
  return { run, tree: () => new SpanTree(spans()), tick: () => (now += 10) };
}

describe('RunTrace', () => {
  it('opens a span at the call and ends it at the result, on the given clock', () => {
    const { run, tree, tick } = runTrace();
    run.push(ev.toolCall('read_file', { path: 'a' }, 'c1'));
    expect(tree().spans).toHaveLength(0);
    tick();
    run.push(ev.toolCall('read_file', { path: 'a.md' }, 'c1')); // sent again: the same invocation
    run.push(ev.toolResult('read_file', '# A', { id: 'c1' }));
    const [span] = tree().spans;
    expect(span!.name).toBe('execute_tool read_file');
    expect(span!.duration).toEqual([0, 10_000_000]);
    run.complete();
    expect(tree().spans).toHaveLength(2);
  });

  it('gives a result whose call came before a --resume a span of its own, once', () => {
    const { run, tree } = runTrace();
    run.push(ev.toolResult('execute', 'boom', { id: 'old', success: false }));
    run.push(ev.toolCall('execute', { command: 'make' }, 'old')); // its call, late: no second span
    run.complete();
    expect(
      tree()
        .where({ 'gen_ai.operation.name': 'execute_tool' })
        .map((s) => s.attributes['evosci.tool.status']),
    ).toEqual(['failed']);
  });

  it('nests a delegation whose task call it never saw under the run', () => {
    const { run, tree } = runTrace();
    run.push(ev.subagentStart('code-agent', { instanceId: 'i1', toolCallId: 'before-resume' }));
    run.push(ev.subagentToolCall('code-agent', 'execute', { command: 'ls' }, 's1', 'i1'));
    run.push(ev.subagentEnd('code-agent', 'i1'));
    run.close();
    const t = tree();
    const [root] = t.roots();
    const agent = t.one({ 'evosci.subagent.instance_id': 'i1', 'gen_ai.operation.name': 'invoke_agent' });
    expect(t.parentOf(agent)).toBe(root);
    expect(t.parentOf(t.one({ 'gen_ai.tool.call.id': 's1' }))).toBe(agent);
    expect(root!.attributes['evosci.run.outcome']).toBe('incomplete');
  });

  it('ends once: a teardown after completion changes nothing', () => {
    const { run, tree } = runTrace();
    run.push(ev.done('ok'));
    run.complete();
    run.close();
    run.push(ev.toolCall('ls', {}, 'late'));
    expect(tree().spans.map((s) => s.attributes['evosci.run.outcome'])).toEqual(['completed']);
  });
});
