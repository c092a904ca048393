import type { AskUserEvent, InterruptEvent } from '../src/events/codecs.js';
import type { RunDelegation } from './runChange.js';
import type {
  DelegationSummary,
  InvocationSummary,
  PanelDispatchSummary,
  RunOutcome,
  RunSummary,
} from './summaryTypes.js';
import type { UsageTotals } from './sumUsage.js';
import { TextRope } from './TextRope.js';
import { REMEMBERED_ORPHANS, type ToolInvocation } from './ToolCallTracker.js';

/** What the model knows of a run that a summary gives as it is. */
export interface SummarySource {
  outcome(): RunOutcome;
  readonly usage: UsageTotals;
  readonly response: string | undefined;
  readonly pending: readonly (InterruptEvent | AskUserEvent)[];
  counts(): Record<string, number>;
  readonly events: number;
}

/**
 * What a `RunSummary` keeps that grows with the run: the text, every
 * invocation, delegation, panel dispatch, error and question. A `RunModel`
 * made with `{ summary: true }` tells it each as it takes the event, by a
 * direct call: the summary is what every event feeds, and a change record
 * per call would cost it a twentieth of its time. The model gives the rest
 * (counts, usage, outcome, what is pending).
 */
export class SummaryBook {
  /** The main agent's text deltas: the model pushes each straight into it, the one thing nearly every event adds. */
  readonly text = new TextRope();
  /**
   * An invocation's slot is taken when it opens, to keep first-seen order; its
   * summary is made once, when it closes. The slots of open invocations and of
   * results whose call may still come are found by key in small maps: a map of
   * every key of a run costs a lookup in a large table for each call and result.
   */
  private readonly invocations: (InvocationSummary | undefined)[] = [];
  private readonly openSlots = new Map<string, number>();
  private readonly orphanSlots = new Map<string, number>();
  private readonly delegations: RunDelegation[] = [];
  private readonly panels = new Map<string, PanelDispatchSummary>();
  private readonly errors: string[] = [];
  private readonly interrupts: InterruptEvent[] = [];
  private readonly questions: AskUserEvent[] = [];

  invocation(i: ToolInvocation): void {
    const { key } = i;
    if (i.status === 'running') {
      if (!this.openSlots.has(key)) this.openSlots.set(key, this.invocations.push(undefined) - 1);
      return;
    }
    const summary = invocationSummary(i);
    const open = this.openSlots.get(key);
    if (open !== undefined) {
      this.openSlots.delete(key);
      this.invocations[open] = summary;
      return;
    }
    // A result whose call was not seen: the call, if it comes, fills in the same slot.
    const orphan = this.orphanSlots.get(key);
    if (orphan !== undefined) {
      this.orphanSlots.delete(key);
      this.invocations[orphan] = summary;
      return;
    }
    const slot = this.invocations.push(summary) - 1;
    // The tracker fills in only an orphan with an id, and remembers as many.
    if (i.callEvent === undefined && i.id !== '') this.keepOrphanSlot(key, slot);
  }

  /** Remembers an orphan's slot, as many as the tracker remembers orphans, the oldest forgotten first. */
  private keepOrphanSlot(key: string, slot: number): void {
    this.orphanSlots.set(key, slot);
    if (this.orphanSlots.size > REMEMBERED_ORPHANS) this.orphanSlots.delete(this.orphanSlots.keys().next().value!);
  }

  delegation(d: RunDelegation): void {
    this.delegations.push(d);
  }

  panel(p: PanelDispatchSummary): void {
    this.panels.set(p.id, p);
  }

  error(message: string): void {
    this.errors.push(message);
  }

  gate(event: InterruptEvent | AskUserEvent): void {
    if (event.type === 'interrupt') this.interrupts.push(event);
    else this.questions.push(event);
  }

  /** The summary of the run `model` followed, told from its start. */
  summaryOf(model: SummarySource): RunSummary {
    const response = model.response;
    const gates = model.pending;
    return {
      outcome: model.outcome(),
      // Left out, not `undefined`, when the stream ended without `done`.
      ...(response !== undefined && { response }),
      text: this.text.joined(response),
      usage: model.usage,
      invocations: this.invocations.filter((i): i is InvocationSummary => i !== undefined),
      delegations: this.delegations.map(delegationSummary),
      panelDispatches: [...this.panels.values()],
      errors: this.errors,
      interrupts: this.interrupts,
      questions: this.questions,
      pendingApprovals: gates.filter((g): g is InterruptEvent => g.type === 'interrupt'),
      pendingQuestions: gates.filter((g): g is AskUserEvent => g.type === 'ask_user'),
      counts: model.counts(),
      events: model.events,
    };
  }
}

/** An object whose keys are added one at a time: only those with a value. */
type Draft<T> = { -readonly [K in keyof T]?: T[K] };

/**
 * A closed invocation as a `RunSummary` keeps it: its final state, the
 * result only when it failed. Fields it does not have are left out, not set
 * to `undefined`, so that a summary equals the object a test writes; one
 * literal per kind of scope, as the tracker makes its snapshots (one per call).
 */
function invocationSummary(i: ToolInvocation): InvocationSummary {
  const { key, id, name, args, subagent, instanceId, status, startedAt, endedAt } = i;
  // A closed invocation has ended; the check only keeps the types whole.
  if (endedAt === undefined) return withError({ key, id, name, args, ...scopeFieldsOf(i), status, startedAt }, i);
  if (subagent === undefined) return withError({ key, id, name, args, status, startedAt, endedAt }, i);
  if (instanceId === undefined) return withError({ key, id, name, args, subagent, status, startedAt, endedAt }, i);
  return withError({ key, id, name, args, subagent, instanceId, status, startedAt, endedAt }, i);
}

/** A failed invocation's summary says what went wrong: the result's content. */
function withError(summary: Draft<InvocationSummary>, i: ToolInvocation): InvocationSummary {
  if (i.status === 'failed' && i.result !== undefined) summary.error = i.result;
  return summary as InvocationSummary;
}

/** The sub-agent fields an invocation has, for the summary that cannot be one literal. */
function scopeFieldsOf({ subagent, instanceId }: ToolInvocation): Pick<InvocationSummary, 'subagent' | 'instanceId'> {
  if (subagent === undefined) return {};
  return instanceId === undefined ? { subagent } : { subagent, instanceId };
}

/** A delegation as a `RunSummary` keeps it, without the ids and type the stream did not give. */
function delegationSummary(d: RunDelegation): DelegationSummary {
  const summary: Draft<DelegationSummary> = { key: d.key };
  if (d.instanceId !== undefined) summary.instanceId = d.instanceId;
  summary.name = d.name;
  if (d.subagentType !== undefined) summary.subagentType = d.subagentType;
  summary.description = d.description;
  if (d.taskCallId !== undefined) summary.taskCallId = d.taskCallId;
  summary.events = d.events;
  summary.ended = d.ended;
  return summary as DelegationSummary;
}
