// How the run's span ends: cancelled, crashed (what of the error it keeps), and the usage it reports.
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { catchError, EMPTY, lastValueFrom, Subject, take, takeWhile, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ExitError, fromJsonl, run, type EvoEvent } from '../../index.js';
import { summarize } from '../../operators/index.js';
import { traceRun, type TraceRunOptions } from '../../otel/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixtureBytes } from '../support/collect.js';
import { memoryMetrics, memoryTracing, SpanTree } from './support.js';

const research = () => fromJsonl(fixtureBytes('research-run.jsonl'));

/** The run's span of a trace of `events$`, and the run's `gen_ai.client.operation.duration` data points. */
async function traced(
  events$: (trace: ReturnType<typeof traceRun>) => Observable<unknown>,
  options: TraceRunOptions = {},
): Promise<{ root: ReadableSpan; spans: ReadableSpan[]; collect: ReturnType<typeof memoryMetrics>['collect'] }> {
  const { provider, spans } = memoryTracing();
  const { meterProvider, collect } = memoryMetrics();
  await lastValueFrom(events$(traceRun({ tracerProvider: provider, meterProvider, ...options })), {
    defaultValue: undefined,
  });
  const roots = new SpanTree(spans()).roots();
  expect(roots).toHaveLength(1);
  return { root: roots[0]!, spans: spans(), collect };
}

/** The `error.type` of each `invoke_agent` measurement of the run's duration. */
async function runDurationErrors(collect: ReturnType<typeof memoryMetrics>['collect']): Promise<unknown[]> {
  const duration = (await collect()).histogram('gen_ai.client.operation.duration')!;
  return duration.dataPoints
    .filter((p) => p.attributes['gen_ai.operation.name'] === 'invoke_agent')
    .map((p) => p.attributes['error.type']);
}

describe('a run unsubscribed before its done', () => {
  it('is cancelled: incomplete, error status, `error.type` cancelled on the span and the duration, no exception', async () => {
    const { root, collect } = await traced((trace) => research().pipe(trace, take(5)));
    expect(root.attributes['evosci.run.outcome']).toBe('incomplete');
    expect(root.attributes['error.type']).toBe('cancelled');
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'unsubscribed before the run ended' });
    expect(root.events).toEqual([]);
    expect(await runDurationErrors(collect)).toEqual(['cancelled']);
  });

  it('is cancelled when the trace follows the summary', async () => {
    const { provider, spans } = memoryTracing();
    const source = new Subject<EvoEvent>();
    const subscription = source.pipe(traceRun({ tracerProvider: provider }), summarize()).subscribe();
    source.next({ type: 'tool_call', name: 'ls', args: {}, id: 'c1' });
    subscription.unsubscribe();
    const root = new SpanTree(spans()).roots()[0]!;
    expect([root.attributes['evosci.run.outcome'], root.attributes['error.type'], root.status.code]).toEqual([
      'incomplete',
      'cancelled',
      SpanStatusCode.ERROR,
    ]);
  });

  it('is not cancelled once its done came: unsubscribed right after it, the run had ended', async () => {
    const { root, collect } = await traced((trace) =>
      research().pipe(
        trace,
        takeWhile((e) => e.type !== 'done', true),
      ),
    );
    expect(root.attributes['evosci.run.outcome']).toBe('completed');
    expect(root.attributes).not.toHaveProperty('error.type');
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(await runDurationErrors(collect)).toEqual([undefined]);
  });
});

describe('a crashed run', () => {
  const secret = 'ModelError: key sk-live-123 refused for prompt "my unpublished idea"';
  const crash = () =>
    fakeEvoSci([
      { lines: [JSON.stringify({ type: 'tool_call', name: 'ls', args: {}, id: 'c1' })] },
      { stderr: 'Traceback (most recent call last):' },
      { stderr: secret },
      { exit: 1 },
    ]);

  async function crashed(
    options: TraceRunOptions,
  ): Promise<{ root: ReadableSpan; spans: ReadableSpan[]; error: ExitError }> {
    let error: unknown;
    const { root, spans } = await traced(
      (trace) =>
        run({ prompt: 'x', ...crash() }).pipe(
          trace,
          catchError((err: unknown) => ((error = err), EMPTY)),
        ),
      options,
    );
    expect(error).toBeInstanceOf(ExitError);
    // The stderr is in the error the app gets: the trace is what must not carry it.
    expect((error as ExitError).message).toContain(secret);
    return { root, spans, error: error as ExitError };
  }

  it('keeps only the error class and its short message with content capture off: stderr is content', async () => {
    const { root, spans, error } = await crashed({});
    expect(root.attributes['error.type']).toBe('ExitError');
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: error.shortMessage });
    const [exception] = root.events;
    expect(exception?.name).toBe('exception');
    expect(exception?.attributes).toMatchObject({
      'exception.type': 'ExitError',
      'exception.message': error.shortMessage,
    });
    // The stack's frames stay, headed by the short message.
    expect(exception?.attributes?.['exception.stacktrace']).toMatch(/^ExitError: .*\n\s+at /);
    const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status, s.events]));
    expect(everything).not.toContain('Traceback');
    expect(everything).not.toContain('sk-live-123');
  });

  it('may carry the stderr lines when content is captured', async () => {
    const { root, error } = await crashed({ captureContent: true });
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: error.message });
    expect(root.status.message).toContain(secret);
    expect(root.events[0]?.attributes?.['exception.message']).toBe(error.message);
  });

  it('reports no usage when none came: absent, not zero, on the span and in the histogram', async () => {
    let error: unknown;
    const { root, collect } = await traced((trace) =>
      run({ prompt: 'x', ...crash() }).pipe(
        trace,
        catchError((err: unknown) => ((error = err), EMPTY)),
      ),
    );
    expect(error).toBeInstanceOf(ExitError);
    expect(root.attributes).not.toHaveProperty('gen_ai.usage.input_tokens');
    expect(root.attributes).not.toHaveProperty('gen_ai.usage.output_tokens');
    const tokens = (await collect()).histogram('gen_ai.client.token.usage');
    expect(tokens?.dataPoints ?? []).toEqual([]);
    // The run itself is still measured, as failed.
    expect(await runDurationErrors(collect)).toEqual(['ExitError']);
  });

  it('reports the usage that came before it crashed', async () => {
    const { root } = await traced((trace) =>
      fromJsonl(
        [
          '{"type": "usage_stats", "input_tokens": 120, "output_tokens": 0}',
          '{"type": "tool_call", "name": "ls", "args": {}, "id": "c1"}',
        ].join('\n'),
      ).pipe(trace),
    );
    expect(root.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 0 });
  });
});
