/**
 * What tracing costs a run, on the `summarize()` variant of decode.bench.ts:
 *
 *   (a) summarize    fromJsonl(1 MiB reads) + summarize()
 *   (b) +no-op       (a) with traceRun() before summarize(), no SDK registered: the API's no-op tracer and meter
 *   (c) +SDK         (a) with traceRun() on the real SDK: BasicTracerProvider + BatchSpanProcessor into an
 *                    exporter that counts and drops the spans, and a MeterProvider with a reader
 *   (d) +tracer      (c) without the MeterProvider: spans only
 *   (e) +meter       the MeterProvider of (c) and the API's no-op tracer: the bookkeeping without spans
 *   (f) SDK floor    (a), then the spans and histogram records of (c) made straight from the summary with the
 *                    SDK of (c): what the SDK itself costs for this run, with no per-event work at all
 *
 * One untimed warm-up pass of each, then N interleaved rounds (a b c a b c …)
 * with a full GC before each timed pass; medians reported. Every variant must
 * summarize the same number of events, and (c) must have made the spans of
 * every invocation, or the script aborts (exit 1).
 *
 * ```bash
 * npx tsx test/bench/trace.bench.ts                # 100 MB, 5 rounds
 * npx tsx test/bench/trace.bench.ts --smoke        # ~2 MB, 1 round
 * npx tsx test/bench/trace.bench.ts --only a,b --rounds 15   # some of the variants
 * ```
 */
import { createReadStream } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { context, trace, type Attributes } from '@opentelemetry/api';
import { lastValueFrom, type MonoTypeOperatorFunction } from 'rxjs';
import { fromJsonl, type EvoEvent, type UnknownEvent } from '../../src/index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { traceRun } from '../../otel/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { Sdk } from './sdk.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';

const MiB = 1 << 20;
const { values: flags } = parseArgs({
  options: { smoke: { type: 'boolean' }, rounds: { type: 'string' }, mb: { type: 'string' }, only: { type: 'string' } },
});
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 5);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));

type Stage = MonoTypeOperatorFunction<EvoEvent | UnknownEvent>;

/**
 * The spans and measurements a trace of `summary` has, made one after another
 * with the SDK: a span per invocation (one attribute set at its end, a
 * duration recorded if it finished), per delegation and per panel dispatch.
 */
function sdkFloor(sdk: Sdk, summary: RunSummary): void {
  const tracer = sdk.tracerProvider.getTracer('floor');
  const duration = sdk.meterProvider.getMeter('floor').createHistogram('gen_ai.client.operation.duration');
  const now = () => performance.timeOrigin + performance.now();
  const root = tracer.startSpan('invoke_agent EvoScientist', { startTime: now(), attributes: { a: 'invoke_agent' } });
  const parent = trace.setSpan(context.active(), root);
  const span = (name: string, attributes: Attributes, end: Attributes) => {
    const started = now();
    const s = tracer.startSpan(name, { startTime: started, attributes }, parent);
    s.setAttributes(end);
    const ended = now();
    s.end(ended);
    return ended - started;
  };
  for (const i of summary.invocations) {
    const attributes: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': i.name };
    if (i.id !== '') attributes['gen_ai.tool.call.id'] = i.id;
    if (i.subagent !== undefined) attributes['evosci.subagent.name'] = i.subagent;
    if (i.instanceId !== undefined) attributes['evosci.subagent.instance_id'] = i.instanceId;
    const ms = span(`execute_tool ${i.name}`, attributes, { 'evosci.tool.status': i.status });
    if (i.status === 'succeeded' || i.status === 'failed')
      duration.record(ms / 1000, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': i.name });
  }
  for (const d of summary.delegations)
    span(`invoke_agent ${d.name}`, { 'gen_ai.operation.name': 'invoke_agent' }, { 'evosci.subagent.ended': d.ended });
  for (const p of summary.panelDispatches)
    span(`invoke_agent ${p.subagentType}`, { 'evosci.panel.id': p.id }, { 'evosci.panel.status': p.status });
  root.end(now());
}

async function summarized(file: string, stage: Stage | undefined): Promise<RunSummary> {
  const events$ = fromJsonl(createReadStream(file, { highWaterMark: MiB }));
  return lastValueFrom(stage === undefined ? events$.pipe(summarize()) : events$.pipe(stage, summarize()));
}

interface Variant {
  readonly label: string;
  readonly run: (file: string) => Promise<RunSummary>;
  readonly times: number[];
  readonly cpu: number[];
}

async function main(): Promise<void> {
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, node ${process.version}`);
  const transcript = largeTranscript({ mb });
  console.log(`transcript: ${(transcript.bytes / 1e6).toFixed(1)} MB, ${transcript.events} events`);
  const sdk = new Sdk();
  const { tracerProvider, meterProvider } = sdk;
  const variants: Variant[] = [
    { label: '(a) fromJsonl + summarize()', run: (f) => summarized(f, undefined), times: [], cpu: [] },
    { label: '(b) + traceRun(), no-op API', run: (f) => summarized(f, traceRun()), times: [], cpu: [] },
    {
      label: '(c) + traceRun(), real SDK',
      run: async (f) => {
        const summary = await summarized(f, traceRun({ tracerProvider, meterProvider }));
        const spans = await sdk.drain();
        const expected = 1 + summary.invocations.length + summary.delegations.length + summary.panelDispatches.length;
        if (spans !== expected) throw new Error(`(c) made ${spans} spans, expected ${expected}`);
        return summary;
      },
      times: [],
      cpu: [],
    },
    {
      label: '(e) + traceRun(), SDK meter, no span recorded',
      run: (f) => summarized(f, traceRun({ meterProvider })),
      times: [],
      cpu: [],
    },
    {
      label: '(f) summarize(), then the same spans straight from the SDK',
      run: async (f) => {
        const summary = await summarized(f, undefined);
        sdkFloor(sdk, summary);
        await sdk.drain();
        return summary;
      },
      times: [],
      cpu: [],
    },
    {
      label: '(d) + traceRun(), SDK tracer only',
      run: async (f) => {
        const summary = await summarized(f, traceRun({ tracerProvider }));
        await sdk.drain();
        return summary;
      },
      times: [],
      cpu: [],
    },
  ];
  const active = variants.filter((v) => flags.only === undefined || flags.only.includes(v.label[1]!));
  const check = (v: Variant, summary: RunSummary) => {
    if (summary.events !== transcript.events) throw new Error(`${v.label} summarized ${summary.events} events`);
  };
  for (const v of active) check(v, await v.run(transcript.path));
  await timedRounds(active, rounds, (v) => v.run(transcript.path), check);

  const base = median(active[0]!.times);
  const baseCpu = median(active[0]!.cpu);
  const rows = active.map((v) => [
    v.label,
    median(v.times).toFixed(3),
    `${(median(v.times) / base).toFixed(3)}×`,
    median(v.cpu).toFixed(3),
    `${(median(v.cpu) / baseCpu).toFixed(3)}×`,
  ]);
  console.log();
  console.log(table(['variant', 'median s', 'time vs first', 'median CPU s', 'CPU vs first'], rows));
  console.log();
  for (const v of active) console.log(`  ${v.label}: ${v.times.map((t) => t.toFixed(3)).join('  ')}`);
}

await main();
