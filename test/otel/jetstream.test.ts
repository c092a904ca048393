// A run through JetStream, traced where it is followed: under the submitter's span.
import { propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJetStream, serveRuns, submitRun } from '../../src/jetstream/index.js';
import { summarize } from '../../operators/index.js';
import { traceHeaders, traceRun, traceServedRuns } from '../../otel/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { connectBroker, streamsFor, uniquePrefix } from '../jetstream/support.js';
import { memoryTracing, SpanTree } from './support.js';

describe('traceRun on fromJetStream', () => {
  let nc: NatsConnection;
  let removeStreams: () => Promise<void>;
  let worker: Subscription;
  const prefix = uniquePrefix('otel');

  beforeAll(async () => {
    nc = await connectBroker();
    removeStreams = await streamsFor(nc, prefix);
    const runOptions = fakeEvoSci([{ transcript: fixturePath('research-run.jsonl') }]);
    worker = serveRuns(nc, { prefix, runOptions }).subscribe();
  });
  afterAll(async () => {
    worker.unsubscribe();
    await removeStreams();
    await nc.close();
  });

  it("nests the remote run's spans under the submitter's span, the tree as summarize() says", async () => {
    const { provider, spans } = memoryTracing();
    const submitter = provider.getTracer('app').startSpan('submit research');
    const runId = await submitRun(nc, { prompt: 'Évaluer un RAG multilingue' }, { prefix });
    const summary = await lastValueFrom(
      fromJetStream(nc, runId, { prefix }).pipe(
        traceRun({ tracerProvider: provider, context: trace.setSpan(ROOT_CONTEXT, submitter) }),
        summarize(),
      ),
    );
    submitter.end();

    const tree = new SpanTree(spans());
    expect(tree.roots().map((s) => s.name)).toEqual(['submit research']);
    const run = tree.one({ 'evosci.run.outcome': 'completed' });
    expect(tree.parentOf(run)!.name).toBe('submit research');
    expect(new Set(tree.spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(
      tree
        .where({ 'gen_ai.operation.name': 'execute_tool' })
        .map((s) => s.name)
        .sort(),
    ).toEqual(summary.invocations.map((i) => `execute_tool ${i.name}`).sort());
    const agents = tree.where({ 'gen_ai.operation.name': 'invoke_agent' });
    expect(agents).toHaveLength(1 + summary.delegations.length + summary.panelDispatches.length);
    expect(summary.delegations.length).toBeGreaterThan(0);
  });
});

describe('a run traced by the worker that runs it', () => {
  let nc: NatsConnection;
  let removeStreams: () => Promise<void>;
  const prefix = uniquePrefix('otel-worker');

  beforeAll(async () => {
    nc = await connectBroker();
    removeStreams = await streamsFor(nc, prefix);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(async () => {
    propagation.disable();
    await removeStreams();
    await nc.close();
  });

  it("nests the worker's run under the submitter's span, carried in the request's headers", async () => {
    const { provider, spans } = memoryTracing();
    const runOptions = fakeEvoSci([{ transcript: fixturePath('research-run.jsonl') }]);
    const worker = serveRuns(nc, {
      prefix,
      runOptions,
      pipeRun: traceServedRuns({ tracerProvider: provider }),
    }).subscribe();
    try {
      const submitter = provider.getTracer('app').startSpan('submit research');
      const headers = traceHeaders(trace.setSpan(ROOT_CONTEXT, submitter));
      expect(headers['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      const runId = await submitRun(nc, { prompt: 'Évaluer un RAG multilingue' }, { prefix, headers });
      const summary = await lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(summarize()));
      submitter.end();
      // The worker's spans end as its run ends: once fromJetStream has read the finished record.
      const tree = new SpanTree(spans());
      const run = tree.one({ 'evosci.run.outcome': 'completed' });
      expect(run.parentSpanContext?.spanId).toBe(submitter.spanContext().spanId);
      expect(run.spanContext().traceId).toBe(submitter.spanContext().traceId);
      expect(tree.where({ 'gen_ai.operation.name': 'execute_tool' })).toHaveLength(summary.invocations.length);
    } finally {
      worker.unsubscribe();
    }
  });

  it('refuses headers a request may not carry, before anything is sent', async () => {
    const refused: Record<string, string>[] = [
      { 'Nats-Msg-Id': 'x' },
      { 'EvoSci-Run-Id': 'x' },
      { traceparent: 'a\r\nb' },
      { 'bad name': 'x' },
    ];
    for (const headers of refused)
      await expect(submitRun(nc, { prompt: 'p' }, { prefix, headers })).rejects.toThrow(/header .* is not usable/);
  });
});
