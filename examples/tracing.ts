// One EvoSci run traced with OpenTelemetry: the run, each tool call and each
// sub-agent as spans, following the GenAI semantic conventions. With
// OTEL_EXPORTER_OTLP_ENDPOINT set (a collector, Jaeger, Tempo…) the spans are
// exported over OTLP/HTTP; otherwise they are printed as a waterfall.
//
//   npx tsx examples/tracing.ts -p "Survey sparse attention into notes.md"
//   npx tsx examples/tracing.ts --demo [--speed 4]      (npm run demo:trace)
//
// With `$EVOSCI_BIN` set or `EvoSci` on the PATH it runs the real CLI;
// otherwise (and always with --demo) the fake CLI replays a bundled run.
import { parseArgs } from 'node:util';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { lastValueFrom } from 'rxjs';
import { run } from 'evosci-rx';
import { summarize } from 'evosci-rx/operators';
import { traceRun } from 'evosci-rx/otel';
import { evosciCommand, livePacing, transcript } from './evosciCommand.js';
import { waterfall } from './waterfall.js';

const { values } = parseArgs({
  options: {
    prompt: { type: 'string', short: 'p', default: 'Survey recent work on sparse attention and write notes.md' },
    demo: { type: 'boolean' },
    speed: { type: 'string', default: '1' },
  },
});
if (values.demo) process.env['EVOSCI_RX_FAKE'] = '1';
const cli = evosciCommand([{ transcript: transcript('demo-run.jsonl'), ...livePacing(Number(values.speed)) }]);
const { prompt } = values;

// The setup: a tracer provider with an exporter; an app with the OpenTelemetry SDK already has one.
const otlp = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] !== undefined;
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  spanProcessors: [otlp ? new BatchSpanProcessor(new OTLPTraceExporter()) : new SimpleSpanProcessor(memory)],
});

const summary = await lastValueFrom(
  run({ prompt, command: cli.command, env: cli.env }).pipe(traceRun({ tracerProvider: provider }), summarize()),
);
await provider.forceFlush(); // exports what is still buffered

if (otlp) console.log(`the trace of a ${summary.outcome} run went to ${process.env['OTEL_EXPORTER_OTLP_ENDPOINT']}`);
else console.log(waterfall(memory.getFinishedSpans()));
console.log(`${summary.outcome} · ${summary.invocations.length} tool calls · ${summary.delegations.length} sub-agents`);
await provider.shutdown();
