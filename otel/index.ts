/**
 * The `evosci-rx/otel` entry: runs as OpenTelemetry traces and metrics. Needs `@opentelemetry/api`.
 *
 * @module evosci-rx/otel
 */
export type { CaptureContent } from './content.js';
export { SEMCONV_VERSION } from './conventions.js';
export { traceHeaders, traceServedRuns } from './propagation.js';
export { traceRun, type TraceRunOptions } from './traceRun.js';
