import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
  type ScopeMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A real SDK tracer provider whose spans are kept in memory, one per test. */
export function memoryTracing(): { provider: BasicTracerProvider; spans: () => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, spans: () => exporter.getFinishedSpans() };
}

/** A real SDK meter provider and what it has recorded, collected on demand. */
export function memoryMetrics(): {
  meterProvider: MeterProvider;
  collect: () => Promise<{ scopes: ScopeMetrics[]; histogram: (name: string) => HistogramMetricData | undefined }>;
} {
  const reader = new (class extends MetricReader {
    protected onShutdown = () => Promise.resolve();
    protected onForceFlush = () => Promise.resolve();
  })({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const collect = async () => {
    const scopes = (await reader.collect()).resourceMetrics.scopeMetrics;
    const all = scopes.flatMap((s) => s.metrics);
    const histogram = (name: string) => all.find((m) => m.descriptor.name === name) as HistogramMetricData | undefined;
    return { scopes, histogram };
  };
  return { meterProvider, collect };
}

/** The spans of one trace, looked up as a tree. */
export class SpanTree {
  readonly byId = new Map<string, ReadableSpan>();

  constructor(readonly spans: readonly ReadableSpan[]) {
    for (const span of spans) this.byId.set(span.spanContext().spanId, span);
  }

  parentOf(span: ReadableSpan): ReadableSpan | undefined {
    const id = span.parentSpanContext?.spanId;
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** The spans with these attribute values. */
  where(attributes: Attributes): ReadableSpan[] {
    return this.spans.filter((span) => Object.entries(attributes).every(([k, v]) => span.attributes[k] === v));
  }

  /** The one span with these attribute values. */
  one(attributes: Attributes): ReadableSpan {
    const found = this.where(attributes);
    if (found.length !== 1) throw new Error(`${found.length} spans have ${JSON.stringify(attributes)}`);
    return found[0]!;
  }

  /** The spans that nest in no span of this trace: the runs. */
  roots(): ReadableSpan[] {
    return this.spans.filter((span) => this.parentOf(span) === undefined);
  }
}
