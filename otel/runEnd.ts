import type { Span } from '@opentelemetry/api';
import type { RunModel, RunOutcome } from '../operators/index.js';
import type { ContentPolicy } from './content.js';
import { AttributeName, ErrorType, Operation } from './conventions.js';
import { CANCELLED, failureOf, markError, type Failure } from './failure.js';
import type { TraceSettings } from './TraceSettings.js';

/** How the subscription to a run ended. */
export type RunEnding =
  | { readonly how: 'completed' }
  | { readonly how: 'failed'; readonly error: unknown }
  | { readonly how: 'unsubscribed' };

/**
 * Gives the run's span what its model knows at the end (outcome, usage, the
 * response when content is captured, how it failed), ends it at `now`, and
 * records the run in the histograms.
 */
export function endRunSpan(
  span: Span,
  settings: TraceSettings,
  model: RunModel,
  ending: RunEnding,
  startedAt: number,
  now: number,
): void {
  const { content, metrics, agentName } = settings;
  const outcome = ending.how === 'failed' ? 'failed' : model.outcome();
  const usage = reportedUsage(model);
  span.setAttribute(AttributeName.outcome, outcome);
  if (usage !== undefined)
    span.setAttributes({ [AttributeName.inputTokens]: usage.input, [AttributeName.outputTokens]: usage.output });
  const response = model.response;
  if (content.on && response !== undefined)
    span.setAttribute(AttributeName.outputMessages, content.message('assistant', response));
  const failure = failureOfRun(ending, outcome, model, content);
  if (failure !== undefined) {
    if (failure.exception !== undefined) span.recordException(failure.exception, now);
    markError(span, failure.type, failure.message);
  }
  span.end(now);
  if (usage !== undefined) metrics?.usage(agentName, usage.input, usage.output);
  metrics?.operation(now - startedAt, {
    [AttributeName.operationName]: Operation.invokeAgent,
    [AttributeName.agentName]: agentName,
    ...(failure === undefined ? {} : { [AttributeName.errorType]: failure.type }),
  });
}

/**
 * The main agent's tokens, if any `usage_stats` came. The producer skips the
 * event when both counts are 0, so a zero total means none came: a run that
 * crashed before reporting has no usage, which is not a usage of nothing.
 */
function reportedUsage(model: RunModel): { readonly input: number; readonly output: number } | undefined {
  const { inputTokens, outputTokens } = model.usage;
  return inputTokens + outputTokens > 0 ? { input: inputTokens, output: outputTokens } : undefined;
}

/** How the run failed, if it did: its Observable errored, it was unsubscribed before `done`, or it sent an `error`. */
function failureOfRun(
  ending: RunEnding,
  outcome: RunOutcome,
  model: RunModel,
  content: ContentPolicy,
): Failure | undefined {
  if (ending.how === 'failed') return failureOf(ending.error, content);
  // Unsubscribed after `done` (`first()`, `takeWhile(…, true)`): the run had ended, nothing was cut short.
  if (ending.how === 'unsubscribed' && outcome === 'incomplete') return CANCELLED;
  const first = model.firstError;
  return first === undefined ? undefined : { type: ErrorType.agent, message: first };
}
