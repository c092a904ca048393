// The real OpenTelemetry SDK as the tracing benchmarks use it.
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

/** An exporter that counts what it is given and keeps nothing: the SDK's cost without a network's. */
export class CountingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The real SDK, as an app that exports has it: spans batched to an exporter, histograms to a reader. */
export class Sdk {
  readonly exporter = new CountingExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(this.exporter, { maxQueueSize: 1 << 16, maxExportBatchSize: 4096 })],
  });
  readonly meterProvider = new MeterProvider({
    readers: [
      new (class extends MetricReader {
        protected onShutdown = () => Promise.resolve();
        protected onForceFlush = () => Promise.resolve();
      })(),
    ],
  });

  /** Spans exported since the last call. */
  async drain(): Promise<number> {
    await this.tracerProvider.forceFlush();
    const n = this.exporter.spans;
    this.exporter.spans = 0;
    return n;
  }
}
