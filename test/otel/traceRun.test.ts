import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import {
  catchError,
  concat,
  EMPTY,
  firstValueFrom,
  from,
  lastValueFrom,
  map,
  Subject,
  take,
  throwError,
  toArray,
} from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExitError, fromJsonl, run, type EvoEvent } from '../../index.js';
import { summarize } from '../../operators/index.js';
import { RunModel } from '../../operators/RunModel.js';
import { traceRun } from '../../otel/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixtureBytes, fixturePath } from '../support/collect.js';
import { marbles } from '../support/marbles.js';
import { memoryTracing, SpanTree } from './support.js';

const research = () => fromJsonl(fixtureBytes('research-run.jsonl'));

describe('traceRun', () => {
  it('passes every event on unchanged, as it came', () => {
    const { provider } = memoryTracing();
    marbles().run(({ cold, expectObservable }) => {
      const values = {
        a: { type: 'text', content: 'hi' },
        b: { type: 'done', content: 'hi', response: 'hi' },
      } as const;
      expectObservable(cold('-a--b-|', values).pipe(traceRun({ tracerProvider: provider }))).toBe('-a--b-|', values);
    });
  });

  it('passes the events through untouched when no SDK is registered', () => {
    marbles().run(({ cold, expectObservable }) => {
      const values = {
        a: { type: 'tool_call', name: 'ls', args: {}, id: 'c1' },
        b: { type: 'error', message: 'x' },
      } as const;
      expectObservable(cold('-a--b-#', values).pipe(traceRun())).toBe('-a--b-#', values);
    });
  });

  it("takes each event once when summarize() follows it: the trace listens to the summary's run model", async () => {
    const events = await lastValueFrom(research().pipe(toArray()));
    const { provider, spans } = memoryTracing();
    const push = vi.spyOn(RunModel.prototype, 'push');
    try {
      await lastValueFrom(from(events).pipe(traceRun({ tracerProvider: provider }), summarize()));
      expect(push).toHaveBeenCalledTimes(events.length);
      const followed = spans().length;
      push.mockClear();
      // With an operator between them, the trace keeps a model of its own.
      await lastValueFrom(
        from(events).pipe(
          traceRun({ tracerProvider: provider }),
          map((e) => e),
          summarize(),
        ),
      );
      expect(push).toHaveBeenCalledTimes(2 * events.length);
      expect(spans().length).toBe(2 * followed);
    } finally {
      push.mockRestore();
    }
  });

  it('ends the run with the source when following the summary: failed on an error, incomplete when unsubscribed', async () => {
    const events = await lastValueFrom(research().pipe(take(80), toArray()));
    const failing = memoryTracing();
    const cut = concat(
      from(events),
      throwError(() => new TypeError('cut')),
    );
    await expect(lastValueFrom(cut.pipe(traceRun({ tracerProvider: failing.provider }), summarize()))).rejects.toThrow(
      'cut',
    );
    const failed = new SpanTree(failing.spans()).roots()[0]!;
    expect(failed.attributes['error.type']).toBe('TypeError');
    expect(failed.attributes['evosci.run.outcome']).toBe('failed');

    const stopped = memoryTracing();
    const source = new Subject<EvoEvent>();
    const subscription = source.pipe(traceRun({ tracerProvider: stopped.provider }), summarize()).subscribe();
    events.forEach((event) => source.next(event));
    expect(stopped.spans().filter((s) => s.attributes['evosci.run.outcome'] !== undefined)).toEqual([]);
    subscription.unsubscribe();
    const tree = new SpanTree(stopped.spans());
    expect(tree.roots().map((s) => s.attributes['evosci.run.outcome'])).toEqual(['incomplete']);
    // The calls open when it stopped ended with it: as many spans as the failed run's, whose source ended there too.
    expect(tree.spans.length).toBe(failing.spans().length);
  });

  /**
   * Summarizes `events` through `traceRun` with a real tracer whose tool spans
   * `faulty` may change (to throw), right before `summarize()` or with an
   * operator between; expects the stream to fail with `message`, and returns
   * the run span's outcome and error type.
   */
  async function tracedFailure(
    events: readonly EvoEvent[],
    between: boolean,
    message: string,
    faulty: (start: () => Span) => Span,
  ): Promise<unknown[]> {
    const { provider, spans } = memoryTracing();
    const real = provider.getTracer('test');
    const tracer: Tracer = {
      startSpan: (name, options, context) => {
        const start = () => real.startSpan(name, options, context);
        return name.startsWith('execute_tool') ? faulty(start) : start();
      },
      startActiveSpan: real.startActiveSpan.bind(real),
    };
    const traced = from(events).pipe(traceRun({ tracer }));
    const summary$ = between
      ? traced.pipe(
          map((e) => e),
          summarize(),
        )
      : traced.pipe(summarize());
    await expect(lastValueFrom(summary$)).rejects.toThrow(message);
    const root = new SpanTree(spans()).roots()[0];
    return [root?.attributes['evosci.run.outcome'], root?.attributes['error.type']];
  }

  it('fails the run span with the error of a tracer that throws, and the stream with it, followed or not', async () => {
    const events = await lastValueFrom(research().pipe(toArray()));
    // A tracer that throws once, or again as the trace ends and closes the call it failed to open.
    for (const [between, always] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      let thrown = false;
      const outcome = await tracedFailure(events, between, 'tracer bug', (start) => {
        if (thrown && !always) return start();
        thrown = true;
        throw new RangeError('tracer bug');
      });
      expect([between, always, ...outcome]).toEqual([between, always, 'failed', 'RangeError']);
    }
  });

  it('errors with a tracer that throws as the trace closes the open calls, after ending the run span', async () => {
    const events: EvoEvent[] = [
      { type: 'tool_call', name: 'a', args: {}, id: '1' },
      { type: 'tool_call', name: 'b', args: {}, id: '2' },
      { type: 'done', content: 'r', response: 'r' },
    ];
    for (const between of [false, true]) {
      const outcome = await tracedFailure(events, between, 'exporter down', (start) =>
        Object.assign(Object.create(start()) as Span, {
          end: () => {
            throw new Error('exporter down');
          },
        }),
      );
      expect([between, ...outcome]).toEqual([between, 'failed', 'Error']);
    }
    // The summary keeps every open call closed, whatever a listener throws.
    const model = new RunModel(() => 0, { summary: true });
    let finishing = false;
    model.listen((change) => {
      if (finishing && change.kind === 'invocation') throw new Error('listener');
    });
    events.slice(0, 2).forEach((event) => model.push(event));
    finishing = true;
    expect(() => model.finish()).toThrow('listener');
    expect(model.summary().invocations.map((i) => [i.name, i.status])).toEqual([
      ['a', 'unfinished'],
      ['b', 'unfinished'],
    ]);
  });

  it('hands on the very objects it was given', async () => {
    const events = await lastValueFrom(research().pipe(toArray()));
    const { provider } = memoryTracing();
    const traced = await lastValueFrom(from(events).pipe(traceRun({ tracerProvider: provider }), toArray()));
    expect(traced).toHaveLength(events.length);
    traced.forEach((event, i) => expect(event).toBe(events[i]));
  });

  it('nests the run under the `context` option', async () => {
    const { provider, spans } = memoryTracing();
    const app = provider.getTracer('app').startSpan('POST /runs');
    await lastValueFrom(
      research().pipe(traceRun({ tracerProvider: provider, context: trace.setSpan(ROOT_CONTEXT, app) })),
    );
    app.end();
    const tree = new SpanTree(spans());
    expect(tree.roots().map((s) => s.name)).toEqual(['POST /runs']);
    expect(tree.parentOf(tree.one({ 'evosci.run.outcome': 'completed' }))!.name).toBe('POST /runs');
  });

  it('records a failed run: error status with the error class and message, and the exception', async () => {
    const { provider, spans } = memoryTracing();
    const fake = fakeEvoSci([{ transcript: fixturePath('error-run.jsonl') }, { exit: 1 }]);
    let error: unknown;
    await lastValueFrom(
      run({ prompt: 'x', ...fake }).pipe(
        traceRun({ tracerProvider: provider }),
        catchError((err: unknown) => ((error = err), EMPTY)),
      ),
      { defaultValue: undefined },
    );
    expect(error).toBeInstanceOf(ExitError);
    const root = new SpanTree(spans()).roots()[0]!;
    expect(root.attributes['error.type']).toBe('ExitError');
    expect(root.attributes['evosci.run.outcome']).toBe('failed');
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    expect(root.events.map((e) => e.attributes?.['exception.type'])).toEqual(['ExitError']);
    // Every span ended: the open call and the delegation closed with the run.
    expect(spans().find((s) => s.attributes['evosci.tool.status'] === 'unfinished')).toBeDefined();
  });

  it('ends every span when unsubscribed, the run incomplete', async () => {
    const { provider, spans } = memoryTracing();
    await lastValueFrom(research().pipe(traceRun({ tracerProvider: provider }), take(60)));
    const tree = new SpanTree(spans());
    expect(tree.roots().map((s) => s.attributes['evosci.run.outcome'])).toEqual(['incomplete']);
    expect(tree.where({ 'evosci.tool.status': 'unfinished' }).length).toBeGreaterThan(0);
  });

  it('records no content unless asked, and cuts it when asked', async () => {
    const content = [
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'gen_ai.agent.description',
    ];
    const off = memoryTracing();
    await lastValueFrom(research().pipe(traceRun({ tracerProvider: off.provider, prompt: 'secret' })));
    for (const span of off.spans()) for (const key of content) expect(span.attributes).not.toHaveProperty(key);

    const on = memoryTracing();
    await lastValueFrom(
      research().pipe(
        traceRun({ tracerProvider: on.provider, prompt: 'p'.repeat(100), captureContent: { maxLength: 40 } }),
      ),
    );
    const tree = new SpanTree(on.spans());
    const root = tree.roots()[0]!;
    expect(JSON.parse(root.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: `${'p'.repeat(39)}…` }] },
    ]);
    const results = tree.spans.map((s) => s.attributes['gen_ai.tool.call.result']).filter((r) => r !== undefined);
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) expect((result as string).length).toBeLessThanOrEqual(40);
  });

  it("takes span times from the caller's clock", async () => {
    const { provider, spans } = memoryTracing();
    let now = Date.UTC(2026, 0, 1);
    await lastValueFrom(research().pipe(traceRun({ tracerProvider: provider, clock: () => (now += 1000) })));
    const root = new SpanTree(spans()).roots()[0]!;
    expect(root.startTime).toEqual([Date.UTC(2026, 0, 1) / 1000 + 1, 0]);
    // Each event read the clock: whole seconds, one per reading.
    for (const span of spans()) expect([span.startTime[1], span.endTime[1]]).toEqual([0, 0]);
    expect(root.duration[0]).toBeGreaterThan(10);
  });

  it('sets the conversation, provider and agent names given', async () => {
    const { provider, spans } = memoryTracing();
    const tracer = provider.getTracer('mine');
    await lastValueFrom(
      research().pipe(traceRun({ tracer, conversationId: 't-1', providerName: 'anthropic', agentName: 'Lab' })),
    );
    const root = new SpanTree(spans()).roots()[0]!;
    expect(root.name).toBe('invoke_agent Lab');
    expect(root.instrumentationScope.name).toBe('mine');
    expect(root.attributes).toMatchObject({ 'gen_ai.conversation.id': 't-1', 'gen_ai.provider.name': 'anthropic' });
  });
});

describe('traceRun with a context manager', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => context.setGlobalContextManager(manager.enable()));
  afterAll(() => {
    manager.disable();
    context.disable();
  });

  it('nests the run under the span active when it is subscribed', async () => {
    const { provider, spans } = memoryTracing();
    const job = provider.getTracer('app').startSpan('job');
    const run$ = research().pipe(traceRun({ tracerProvider: provider }));
    await context.with(trace.setSpan(context.active(), job), () => lastValueFrom(run$));
    job.end();
    const tree = new SpanTree(spans());
    expect(tree.roots().map((s) => s.name)).toEqual(['job']);
    expect(tree.parentOf(tree.one({ 'evosci.run.outcome': 'completed' }))!.name).toBe('job');
  });
});

describe('traceRun metrics', () => {
  it('records token usage and operation durations in the histograms of the conventions', async () => {
    const reader = new (class extends MetricReader {
      protected onShutdown = () => Promise.resolve();
      protected onForceFlush = () => Promise.resolve();
    })({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { provider } = memoryTracing();
    const summary = await firstValueFrom(
      research().pipe(traceRun({ tracerProvider: provider, meterProvider, providerName: 'anthropic' }), summarize()),
    );
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const tokens = metrics.find((m) => m.descriptor.name === 'gen_ai.client.token.usage') as HistogramMetricData;
    expect(tokens.descriptor.unit).toBe('{token}');
    const byType = Object.fromEntries(tokens.dataPoints.map((p) => [p.attributes['gen_ai.token.type'], p.value.sum]));
    expect(byType).toEqual({ input: summary.usage.inputTokens, output: summary.usage.outputTokens });
    expect(tokens.dataPoints[0]!.attributes['gen_ai.provider.name']).toBe('anthropic');
    const duration = metrics.find(
      (m) => m.descriptor.name === 'gen_ai.client.operation.duration',
    ) as HistogramMetricData;
    expect(duration.descriptor.unit).toBe('s');
    const count = (operation: string) =>
      duration.dataPoints
        .filter((p) => p.attributes['gen_ai.operation.name'] === operation)
        .reduce((n, p) => n + p.value.count, 0);
    const finished = summary.invocations.filter((i) => i.status === 'succeeded' || i.status === 'failed');
    expect(count('execute_tool')).toBe(finished.length);
    expect(count('invoke_agent')).toBe(1);
  });
});
