import {
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  isKnownEvent,
  type EvoEvent,
  type PanelDispatchCompleteEvent,
  type PanelDispatchErrorEvent,
  type PanelDispatchStartEvent,
  type UnknownEvent,
} from '../src/events.js';
import { DelegationTracker, type Delegation } from '../operators/DelegationTracker.js';
import { ToolCallTracker, type ToolInvocation } from '../operators/ToolCallTracker.js';
import type { ContentPolicy } from './content.js';
import { AttributeName, ErrorType, Operation } from './conventions.js';
import { RunOutcomeTracker } from './RunOutcomeTracker.js';
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

/** An error message on a span status: enough to recognise it, never a whole stderr. */
const MAX_STATUS_MESSAGE = 1024;

/**
 * The spans of one run while it streams: the run's `invoke_agent` span, an
 * `execute_tool` span per invocation, an `invoke_agent` span per delegation
 * under its `task` call and per panel dispatch under its `code_interpreter`
 * call. Pairing and grouping are the trackers `summarize` uses, so the tree
 * has its invocations and delegations. Spans end as their calls end; what is
 * still open when the run ends, ends with it.
 */
export class RunTrace {
  private readonly root: Span;
  private readonly rootContext: Context;
  private readonly startedAt: number;
  private readonly tools: ToolCallTracker;
  private readonly delegations: DelegationTracker;
  private readonly outcome = new RunOutcomeTracker();
  /** Open invocations' spans, by key. */
  private readonly toolSpans = new Map<string, Span>();
  /** Open main-agent calls' spans by wire id: where delegations and panel dispatches nest. */
  private readonly mainCalls = new Map<string, Span>();
  private readonly delegationSpans = new Map<Delegation, Span>();
  private readonly panels = new Map<string, Span>();
  /** The delegation that the event being taken belongs to. */
  private owner: Delegation | undefined;
  private ended = false;

  constructor(private readonly settings: TraceSettings) {
    this.startedAt = settings.now();
    this.root = settings.tracer.startSpan(
      `${Operation.invokeAgent} ${settings.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: this.startedAt,
        attributes: {
          [AttributeName.operationName]: Operation.invokeAgent,
          [AttributeName.agentName]: settings.agentName,
          ...settings.rootAttributes,
        },
      },
      settings.parent,
    );
    this.rootContext = trace.setSpan(settings.parent, this.root);
    this.tools = new ToolCallTracker(settings.now);
    this.delegations = new DelegationTracker({
      start: (delegation) => this.startDelegation(delegation),
      event: (delegation) => (this.owner = delegation),
      end: (delegation) => this.endDelegation(delegation),
    });
  }

  /** Whether anything is kept of this run: its span is recorded, or its histograms are. */
  get recording(): boolean {
    return this.root.isRecording() || this.settings.metrics !== undefined;
  }

  /** Takes one event of the run. */
  push(event: EvoEvent | UnknownEvent): void {
    if (this.ended || !isKnownEvent(event)) return;
    this.outcome.push(event);
    switch (event.type) {
      case 'panel_dispatch_start':
        return this.startPanel(event);
      case 'panel_dispatch_complete':
      case 'panel_dispatch_error':
        return this.endPanel(event);
      // Text, thinking and usage make no span: most events stop here.
      case 'text':
      case 'thinking':
      case 'usage_stats':
      case 'done':
        return;
      default: {
        this.owner = undefined;
        this.delegations.push(event);
        const snapshot = this.tools.push(event);
        if (snapshot !== undefined) this.invocation(snapshot, event);
      }
    }
  }

  /** The source completed. */
  complete(): void {
    this.end(undefined);
  }

  /** The source errored: the run's span takes the error's class and message. */
  fail(error: unknown): void {
    this.end(error === undefined ? new Error('the run failed') : error);
  }

  /** Teardown: a run unsubscribed before it ended is `incomplete`. Does nothing after `complete` or `fail`. */
  close(): void {
    this.end(undefined);
  }

  private end(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    for (const snapshot of this.tools.finish()) this.invocation(snapshot, undefined);
    this.delegations.finish();
    const now = this.settings.now();
    for (const span of this.panels.values()) {
      span.setAttribute(AttributeName.panelStatus, 'unfinished');
      span.end(now);
    }
    this.panels.clear();
    const { inputTokens, outputTokens } = this.outcome;
    const outcome = error === undefined ? this.outcome.outcome() : 'failed';
    this.root.setAttributes({
      [AttributeName.inputTokens]: inputTokens,
      [AttributeName.outputTokens]: outputTokens,
      [AttributeName.outcome]: outcome,
    });
    if (this.settings.content.on && this.outcome.response !== undefined)
      this.root.setAttribute(
        AttributeName.outputMessages,
        this.settings.content.message('assistant', this.outcome.response),
      );
    const errorType = this.markFailure(error);
    this.root.end(now);
    this.settings.metrics?.usage(this.settings.agentName, inputTokens, outputTokens);
    this.settings.metrics?.operation(now - this.startedAt, {
      [AttributeName.operationName]: Operation.invokeAgent,
      [AttributeName.agentName]: this.settings.agentName,
      ...(errorType === undefined ? {} : { [AttributeName.errorType]: errorType }),
    });
  }

  /** Sets the run's error status, if it failed; returns its `error.type`. */
  private markFailure(error: unknown): string | undefined {
    if (error !== undefined) {
      const type = error instanceof Error ? error.name : typeof error;
      // Never serialised: a value that is not an Error may be anything, circular included.
      const message =
        error instanceof Error ? error.message : typeof error === 'string' ? error : `a ${typeof error} was thrown`;
      if (error instanceof Error) this.root.recordException(error);
      this.markError(this.root, type, message);
      return type;
    }
    const first = this.outcome.firstError;
    if (first === undefined) return undefined;
    this.markError(this.root, ErrorType.agent, first);
    return ErrorType.agent;
  }

  private markError(span: Span, type: string, message: string): void {
    span.setAttribute(AttributeName.errorType, type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, MAX_STATUS_MESSAGE) });
  }

  private startSpan(name: string, parent: Span | undefined, attributes: Attributes, startTime: number): Span {
    const context = parent === undefined ? this.rootContext : trace.setSpan(this.settings.parent, parent);
    return this.settings.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime, attributes }, context);
  }

  private invocation(invocation: ToolInvocation, event: EvoEvent | undefined): void {
    const span = this.toolSpans.get(invocation.key);
    if (invocation.status === 'running') {
      if (span === undefined) this.openTool(invocation);
      else if (this.settings.content.on)
        span.setAttribute(AttributeName.toolCallArguments, this.settings.content.json(invocation.args));
      return;
    }
    if (span !== undefined) return this.closeTool(span, invocation);
    // The call of a result that came first (made before a `--resume`): that invocation's span has ended.
    if (event?.type === 'tool_call' || event?.type === 'subagent_tool_call') return;
    this.closeTool(this.openTool(invocation), invocation);
  }

  private openTool(invocation: ToolInvocation): Span {
    const { key, id, name, subagent, instanceId } = invocation;
    const parent = subagent === undefined || !this.owner ? undefined : this.delegationSpans.get(this.owner);
    const attributes: Attributes = {
      [AttributeName.operationName]: Operation.executeTool,
      [AttributeName.toolName]: name,
    };
    if (id !== '') attributes[AttributeName.toolCallId] = id;
    if (subagent !== undefined) attributes[AttributeName.subagent] = subagent;
    if (instanceId !== undefined) attributes[AttributeName.instanceId] = instanceId;
    if (this.settings.content.on)
      attributes[AttributeName.toolCallArguments] = this.settings.content.json(invocation.args);
    const span = this.startSpan(`${Operation.executeTool} ${name}`, parent, attributes, invocation.startedAt);
    this.toolSpans.set(key, span);
    if (subagent === undefined && id !== '') this.mainCalls.set(id, span);
    return span;
  }

  private closeTool(span: Span, invocation: ToolInvocation): void {
    const { key, id, name, status, result } = invocation;
    this.toolSpans.delete(key);
    if (invocation.subagent === undefined && this.mainCalls.get(id) === span) this.mainCalls.delete(id);
    span.setAttribute(AttributeName.toolStatus, status);
    const content = this.settings.content;
    if (status === 'failed')
      this.markError(
        span,
        ErrorType.tool,
        content.on && result !== undefined ? content.text(result) : 'the tool failed',
      );
    else if (status === 'succeeded' && content.on && result !== undefined)
      span.setAttribute(AttributeName.toolCallResult, content.text(result));
    const endedAt = invocation.endedAt ?? this.settings.now();
    span.end(endedAt);
    if (status !== 'succeeded' && status !== 'failed') return;
    this.settings.metrics?.operation(endedAt - invocation.startedAt, {
      [AttributeName.operationName]: Operation.executeTool,
      [AttributeName.toolName]: name,
      ...(status === 'failed' ? { [AttributeName.errorType]: ErrorType.tool } : {}),
    });
  }

  private startDelegation(delegation: Delegation): void {
    const parent = delegation.taskCallId === undefined ? undefined : this.mainCalls.get(delegation.taskCallId);
    const agent = delegation.subagentType ?? delegation.name;
    const attributes: Attributes = {
      [AttributeName.operationName]: Operation.invokeAgent,
      [AttributeName.agentName]: agent,
    };
    if (delegation.instanceId !== undefined) attributes[AttributeName.instanceId] = delegation.instanceId;
    const span = this.startSpan(`${Operation.invokeAgent} ${agent}`, parent, attributes, this.settings.now());
    this.delegationSpans.set(delegation, span);
  }

  private endDelegation(delegation: Delegation): void {
    const span = this.delegationSpans.get(delegation);
    if (span === undefined) return;
    this.delegationSpans.delete(delegation);
    // The task call may name the sub-agent's type only after it started.
    const agent = delegation.subagentType ?? delegation.name;
    span.updateName(`${Operation.invokeAgent} ${agent}`);
    span.setAttributes({ [AttributeName.agentName]: agent, [AttributeName.subagentEnded]: delegation.ended });
    if (this.settings.content.on && delegation.description !== '')
      span.setAttribute(AttributeName.agentDescription, this.settings.content.text(delegation.description));
    span.end(this.settings.now());
  }

  private startPanel(event: PanelDispatchStartEvent): void {
    const attributes: Attributes = {
      [AttributeName.operationName]: Operation.invokeAgent,
      [AttributeName.agentName]: event.subagent_type,
      [AttributeName.panelId]: event.id,
    };
    if (this.settings.content.on) {
      attributes[AttributeName.panelLabel] = this.settings.content.text(event.label);
      attributes[AttributeName.agentDescription] = this.settings.content.text(event.description);
    }
    const name = `${Operation.invokeAgent} ${event.subagent_type}`;
    this.panels.set(event.id, this.startSpan(name, this.mainCalls.get(event.eval_id), attributes, this.settings.now()));
  }

  private endPanel(event: PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void {
    const now = this.settings.now();
    const span =
      this.panels.get(event.id) ??
      // A completion whose start this stream did not show.
      this.startSpan(
        Operation.invokeAgent,
        this.mainCalls.get(event.eval_id),
        { [AttributeName.operationName]: Operation.invokeAgent, [AttributeName.panelId]: event.id },
        now,
      );
    this.panels.delete(event.id);
    span.setAttribute(AttributeName.panelDurationMs, event.duration_ms);
    if (event.type === 'panel_dispatch_error') {
      span.setAttribute(AttributeName.panelStatus, 'failed');
      this.markError(span, ErrorType.panel, event.error);
    } else span.setAttribute(AttributeName.panelStatus, 'completed');
    span.end(now);
  }
}
