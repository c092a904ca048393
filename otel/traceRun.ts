import {
  context as contexts,
  metrics,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type MeterProvider,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { OperatorFunction } from 'rxjs';
import { watchRun } from '../operators/index.js';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import { runOptionsOf, type RunIdentity } from '../src/process/runOptionsOf.js';
import { ContentPolicy, type CaptureContent } from './content.js';
import { AttributeName } from './conventions.js';
import { RunMetrics } from './RunMetrics.js';
import { RunTrace } from './RunTrace.js';
import type { TraceSettings } from './TraceSettings.js';
import { VERSION } from './version.js';

/** Options of `traceRun`. */
export interface TraceRunOptions {
  /** The tracer; else one from `tracerProvider`; else one from the global provider (a no-op until an SDK registers one). */
  readonly tracer?: Tracer;
  /** Where the tracer comes from when `tracer` is not given. */
  readonly tracerProvider?: TracerProvider;
  /** Where the histograms go, likewise: `meter`, else `meterProvider`, else the global provider. */
  readonly meter?: Meter;
  /** Where the meter comes from when `meter` is not given. */
  readonly meterProvider?: MeterProvider;
  /** The context the run's span nests under. Default: the context active when the run is subscribed. */
  readonly context?: Context;
  /** `gen_ai.agent.name` of the run's span. Default `EvoScientist`. */
  readonly agentName?: string;
  /** `gen_ai.provider.name` (`anthropic`, `openai`, …): the stream does not say which provider the CLI uses. */
  readonly providerName?: string;
  /** `gen_ai.conversation.id`: the thread id, when the run resumes one. Default: `resume` of the `run()` traced. */
  readonly conversationId?: string;
  /** The run's prompt, recorded as `gen_ai.input.messages` when `captureContent` is on. Default: `prompt` of the `run()` traced. */
  readonly prompt?: string;
  /** Record prompts, arguments and results on spans (off by default; `true` cuts each to 4096 characters). */
  readonly captureContent?: CaptureContent;
  /** Milliseconds since the epoch, read at each event: a replay gives its own. Default: a monotonic clock. */
  readonly clock?: () => number;
}

/** The instrumentation scope of the spans and histograms: the package, at its version. */
const SCOPE = 'evosci-rx';

const origin = performance.timeOrigin;
const monotonicNow = (): number => origin + performance.now();

/**
 * Traces a run and passes its events on unchanged: a root `invoke_agent`
 * span for the run (under the span active at subscription, or `context`),
 * an `execute_tool {name}` span per tool call, an `invoke_agent
 * {subagent_type}` span per delegation under its `task` call's span (its own
 * calls under it) and per panel dispatch under its `code_interpreter` call,
 * following the OpenTelemetry GenAI semantic conventions v1.41.0. Token usage
 * and operation durations go to the `gen_ai.client.token.usage` and
 * `gen_ai.client.operation.duration` histograms.
 *
 * Spans end with their calls. When the source completes, calls still open end
 * `awaiting-input` (the run stopped to ask about them) or `unfinished`; when
 * it errors, the run's span takes error status with the error's class and
 * its one-line message (the stderr lines too when content is captured); when
 * it is unsubscribed before `done`, the run is `incomplete` with error status
 * and `error.type` `cancelled`. Content is not recorded unless
 * `captureContent` says so. Each subscription is one trace.
 * A run whose span is not recorded (no SDK registered, or sampled out), with
 * no SDK meter either, is passed through untouched: it costs nothing.
 * It is a `watchRun()`: followed directly by `summarize()`, the trace
 * listens to the summary's run model, and each event is taken once for both;
 * anywhere else, it keeps a model of its own.
 *
 * Right after `run()`, it takes that run's `prompt` and `resume` (as
 * `gen_ai.conversation.id`) from it; the options given here win.
 *
 * ```ts
 * run({ prompt, resume }).pipe(traceRun({ providerName: 'anthropic' }), summarize());
 * ```
 *
 * ```
 * source:     --c--r--s--c'-r'-e--d--|     c: tool_call, s: subagent_start, e: subagent_end
 * traceRun(): --c--r--s--c'-r'-e--d--|     (the same events)
 * spans:      [invoke_agent EvoScientist·······················]
 *               [execute_tool task···········]
 *                     [invoke_agent code-agent]
 *                         [execute_tool execute]
 * ```
 */
export function traceRun<T extends EvoEvent | UnknownEvent>(options: TraceRunOptions = {}): OperatorFunction<T, T> {
  const content = new ContentPolicy(options.captureContent);
  return (source) => {
    // Only the Observable `run()` returned: after another operator, its events may no longer be that run's alone.
    const carried = runOptionsOf(source);
    return source.pipe(
      watchRun((model) => {
        const run = new RunTrace(settingsOf(options, carried, content), model);
        // No span recorded (no SDK, or sampled out) and no histogram kept: nothing to follow.
        return run.recording ? run : undefined;
      }),
    );
  };
}

function settingsOf(options: TraceRunOptions, carried: RunIdentity | undefined, content: ContentPolicy): TraceSettings {
  const tracer = options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE, VERSION);
  const meter = options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE, VERSION);
  const common: Attributes =
    options.providerName === undefined ? {} : { [AttributeName.providerName]: options.providerName };
  const rootAttributes: Attributes = { ...common };
  const conversationId = options.conversationId ?? carried?.resume;
  if (conversationId !== undefined) rootAttributes[AttributeName.conversationId] = conversationId;
  const prompt = options.prompt ?? carried?.prompt;
  if (content.on && prompt !== undefined) rootAttributes[AttributeName.inputMessages] = content.message('user', prompt);
  return {
    tracer,
    parent: options.context ?? contexts.active(),
    metrics: RunMetrics.of(meter, common),
    content,
    agentName: options.agentName ?? 'EvoScientist',
    rootAttributes,
    now: options.clock ?? monotonicNow,
  };
}
