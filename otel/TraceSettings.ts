import type { Attributes, Context, Tracer } from '@opentelemetry/api';
import type { ContentPolicy } from './content.js';
import type { RunMetrics } from './RunMetrics.js';

/** What one trace needs, resolved from `TraceRunOptions` at subscription. */
export interface TraceSettings {
  readonly tracer: Tracer;
  /** The context the run's span nests under. */
  readonly parent: Context;
  readonly metrics: RunMetrics | undefined;
  readonly content: ContentPolicy;
  readonly agentName: string;
  /** Attributes the run's span starts with (provider, conversation, prompt). */
  readonly rootAttributes: Attributes;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}
