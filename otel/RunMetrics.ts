import { createNoopMeter, type Attributes, type Histogram, type Meter } from '@opentelemetry/api';
import { AttributeName, DURATION_BUCKETS, ErrorType, Metric, Operation, TOKEN_BUCKETS } from './conventions.js';

/** The class of the API's no-op histogram: what a meter gives when no SDK is registered. */
const NoopHistogram = createNoopMeter().createHistogram('noop').constructor;

/** The two histograms of the conventions, as one trace records into them. */
export class RunMetrics {
  /** The histograms of `meter`, or `undefined` when it keeps nothing (the API without an SDK). */
  static of(meter: Meter, common: Attributes): RunMetrics | undefined {
    const metrics = new RunMetrics(meter, common);
    return metrics.tokens.constructor === NoopHistogram ? undefined : metrics;
  }

  private readonly tokens: Histogram;
  private readonly duration: Histogram;
  /** The attributes of a tool call's measurement, by tool name and then failed or not: built once per tool. */
  private readonly toolAttributes = new Map<string, readonly [Attributes, Attributes]>();

  private constructor(
    meter: Meter,
    /** Attributes every measurement carries (`gen_ai.provider.name` when given). */
    private readonly common: Attributes,
  ) {
    this.tokens = meter.createHistogram(Metric.tokenUsage, {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.duration = meter.createHistogram(Metric.operationDuration, {
      unit: 's',
      description: 'GenAI operation duration.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  /** A run's main-agent tokens, one measurement per token type. */
  usage(agentName: string, input: number, output: number): void {
    const attributes = {
      ...this.common,
      [AttributeName.operationName]: Operation.invokeAgent,
      [AttributeName.agentName]: agentName,
    };
    this.tokens.record(input, { ...attributes, [AttributeName.tokenType]: 'input' });
    this.tokens.record(output, { ...attributes, [AttributeName.tokenType]: 'output' });
  }

  /** How long a run took, in seconds. */
  operation(ms: number, attributes: Attributes): void {
    this.duration.record(Math.max(0, ms) / 1000, { ...this.common, ...attributes });
  }

  /** How long a finished tool call took, in seconds: a run makes many, of a few tools. */
  tool(ms: number, name: string, failed: boolean): void {
    let attributes = this.toolAttributes.get(name);
    if (attributes === undefined) {
      const ok = {
        ...this.common,
        [AttributeName.operationName]: Operation.executeTool,
        [AttributeName.toolName]: name,
      };
      attributes = [ok, { ...ok, [AttributeName.errorType]: ErrorType.tool }];
      this.toolAttributes.set(name, attributes);
    }
    this.duration.record(Math.max(0, ms) / 1000, attributes[failed ? 1 : 0]);
  }
}
