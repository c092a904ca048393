import { SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type {
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
} from '../src/events/codecs.js';
import type {
  PanelDispatchEvent,
  RunChange,
  RunDelegation,
  RunModel,
  RunWatcher,
  ToolInvocation,
} from '../operators/index.js';
import { AttributeName, ErrorType, Operation } from './conventions.js';
import { markError } from './failure.js';
import { endRunSpan, type RunEnding } from './runEnd.js';
import type { TraceSettings } from './TraceSettings.js';

/** An open tool call's span, and when it started on the trace's clock. */
interface ToolSpan {
  readonly span: Span;
  readonly startedAt: number;
}

/**
 * The spans of one run while it streams: the run's `invoke_agent` span, an
 * `execute_tool` span per invocation, an `invoke_agent` span per delegation
 * under its `task` call and per panel dispatch under its `code_interpreter`
 * call. It takes no event itself: it listens to a `RunModel`, the one
 * `summarize()` keeps when it follows `traceRun()`, else one of its own, so
 * the tree has the summary's invocations and delegations and an event that
 * opens or closes nothing (a text delta) costs the trace nothing. Spans end as
 * their calls end; what is still open when the run ends, ends with it.
 */
export class RunTrace implements RunWatcher {
  private readonly root: Span;
  private readonly rootContext: Context;
  private readonly startedAt: number;
  /** Open invocations' spans, by key. */
  private readonly toolSpans = new Map<string, ToolSpan>();
  /** Open main-agent calls' spans by wire id: where delegations and panel dispatches nest. */
  private readonly mainCalls = new Map<string, Span>();
  private readonly delegationSpans = new Map<RunDelegation, Span>();
  private readonly panels = new Map<string, Span>();
  private ended = false;

  /** `model`: the run's model, which it listens to while the run's span is recorded. */
  constructor(
    private readonly settings: TraceSettings,
    private readonly model: RunModel,
  ) {
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
    if (this.recording) model.listen((change) => this.change(change));
  }

  /** Whether anything is kept of this run: its span is recorded, or its histograms are. */
  get recording(): boolean {
    return this.root.isRecording() || this.settings.metrics !== undefined;
  }

  /** The source completed. */
  complete(): void {
    this.end({ how: 'completed' });
  }

  /** The source errored: the run's span takes the error's class and message. */
  fail(error: unknown): void {
    this.end({ how: 'failed', error: error === undefined ? new Error('the run failed') : error });
  }

  /** Teardown: a run unsubscribed before its `done` is `incomplete` and `cancelled`. Nothing after `complete` or `fail`. */
  close(): void {
    this.end({ how: 'unsubscribed' });
  }

  private end(ending: RunEnding): void {
    if (this.ended) return;
    this.ended = true;
    let thrown: { readonly error: unknown } | undefined;
    try {
      this.model.finish();
    } catch (err) {
      // Closing what was open made a span and the tracer threw: the run's span still ends, with that error, then it goes on.
      thrown = { error: err };
    }
    const now = this.settings.now();
    for (const span of this.panels.values()) {
      span.setAttribute(AttributeName.panelStatus, 'unfinished');
      span.end(now);
    }
    this.panels.clear();
    const how: RunEnding = thrown && ending.how !== 'failed' ? { how: 'failed', error: thrown.error } : ending;
    endRunSpan(this.root, this.settings, this.model, how, this.startedAt, now);
    if (thrown) throw thrown.error;
  }

  private startSpan(name: string, parent: Span | undefined, attributes: Attributes, startTime: number): Span {
    const context = parent === undefined ? this.rootContext : trace.setSpan(this.settings.parent, parent);
    return this.settings.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime, attributes }, context);
  }

  /** What a change of the run does to its spans. */
  private change(change: RunChange): void {
    switch (change.kind) {
      case 'invocation':
        return this.invocation(change.invocation, change.event?.type, change.delegation);
      case 'delegation-start':
        return this.delegationStarted(change.delegation);
      case 'delegation-end':
        return this.delegationEnded(change.delegation);
      case 'panel':
        return this.panel(change.event);
      default:
        return;
    }
  }

  /** An invocation opened, changed or closed. */
  private invocation(
    invocation: ToolInvocation,
    madeBy: string | undefined,
    delegation: RunDelegation | undefined,
  ): void {
    const open = this.toolSpans.get(invocation.key);
    if (invocation.status === 'running') {
      if (open === undefined) this.openTool(invocation, delegation);
      else if (this.settings.content.on)
        open.span.setAttribute(AttributeName.toolCallArguments, this.settings.content.json(invocation.args));
      return;
    }
    if (open !== undefined) return this.closeTool(open, invocation);
    // The call of a result that came first (made before a `--resume`): that invocation's span has ended.
    if (madeBy === 'tool_call' || madeBy === 'subagent_tool_call') return;
    this.closeTool(this.openTool(invocation, delegation), invocation);
  }

  private openTool(invocation: ToolInvocation, delegation: RunDelegation | undefined): ToolSpan {
    const { key, id, name, subagent, instanceId } = invocation;
    const parent = subagent === undefined || !delegation ? undefined : this.delegationSpans.get(delegation);
    const attributes: Attributes = {
      [AttributeName.operationName]: Operation.executeTool,
      [AttributeName.toolName]: name,
    };
    if (id !== '') attributes[AttributeName.toolCallId] = id;
    if (subagent !== undefined) attributes[AttributeName.subagent] = subagent;
    if (instanceId !== undefined) attributes[AttributeName.instanceId] = instanceId;
    if (this.settings.content.on)
      attributes[AttributeName.toolCallArguments] = this.settings.content.json(invocation.args);
    // The trace's own clock: the model's may be `summarize()`'s scheduler.
    const startedAt = this.settings.now();
    const span = this.startSpan(`${Operation.executeTool} ${name}`, parent, attributes, startedAt);
    const open = { span, startedAt };
    this.toolSpans.set(key, open);
    if (subagent === undefined && id !== '') this.mainCalls.set(id, span);
    return open;
  }

  private closeTool({ span, startedAt }: ToolSpan, invocation: ToolInvocation): void {
    const { key, id, name, status, result } = invocation;
    this.toolSpans.delete(key);
    if (invocation.subagent === undefined && this.mainCalls.get(id) === span) this.mainCalls.delete(id);
    span.setAttribute(AttributeName.toolStatus, status);
    const content = this.settings.content;
    if (status === 'failed')
      markError(span, ErrorType.tool, content.on && result !== undefined ? content.text(result) : 'the tool failed');
    else if (status === 'succeeded' && content.on && result !== undefined)
      span.setAttribute(AttributeName.toolCallResult, content.text(result));
    const endedAt = this.settings.now();
    span.end(endedAt);
    if (status !== 'succeeded' && status !== 'failed') return;
    this.settings.metrics?.tool(endedAt - startedAt, name, status === 'failed');
  }

  private delegationStarted(delegation: RunDelegation): void {
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

  /** A delegation ended, or the run did. */
  private delegationEnded(delegation: RunDelegation): void {
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

  private panel(event: PanelDispatchEvent): void {
    if (event.type === 'panel_dispatch_start') this.panelStarted(event);
    else this.panelEnded(event);
  }

  private panelStarted(event: PanelDispatchStartEvent): void {
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

  private panelEnded(event: PanelDispatchCompleteEvent | PanelDispatchErrorEvent): void {
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
      markError(span, ErrorType.panel, event.error);
    } else span.setAttribute(AttributeName.panelStatus, 'completed');
    span.end(now);
  }
}
