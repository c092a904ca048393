// One run's card in plain DOM: each action updates the few nodes it changes.
import type { DecodeIssue, RunStatus } from 'evosci-rx/events';
import {
  briefArgs,
  countToolCalls,
  jsonPreview,
  type PanelDispatchSummary,
  type RunOutcome,
  type RunSummary,
  type SubagentRun,
  type ToolInvocation,
  type UsageTotals,
  type ViewAction,
} from 'evosci-rx/operators';
import { hasEnded, scenarioOf } from '../api.js';
import { ReplyBox } from './reply.js';

const number = new Intl.NumberFormat('en-US');
const ICONS: Record<ToolInvocation['status'], string> = {
  running: '◌',
  succeeded: '✓',
  failed: '✗',
  unfinished: '…',
  'awaiting-input': '?',
};

type Child = Node | string | undefined;

/** `h('td', { class: 'name', 'data-testid': 'x' }, 'text')` */
function h(tag: string, attributes: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== undefined) element.append(child);
  return element;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * An id as people read it: the last 8 characters of `task:toolu_01…`, which
 * tell calls apart (the prefix is the same for all); the whole id is in the tooltip.
 */
export function shortId(id: string): string {
  const tail = id.slice(id.lastIndexOf(':') + 1).replace(/^toolu_/, '');
  return tail.length <= 8 ? tail : `…${tail.slice(-8)}`;
}

class ToolTable {
  readonly element: HTMLElement;
  private readonly body = h('tbody');
  private readonly rows = new Map<string, HTMLElement>();

  constructor(empty: string) {
    this.element = h('table', { class: 'tools', 'data-empty': empty }, this.body);
  }

  /** What an empty table says once the run has ended. */
  ended(): void {
    this.element.dataset['empty'] = 'no tool calls';
  }

  set(invocation: ToolInvocation): void {
    const row = h(
      'tr',
      { 'data-testid': 'tool-row', 'data-key': invocation.key, 'data-status': invocation.status },
      h('td', { class: 'icon' }, ICONS[invocation.status]),
      h('td', { class: 'name', 'data-testid': 'tool-name' }, invocation.name),
      h('td', { class: 'brief', title: briefArgs(invocation.args, 200) }, briefArgs(invocation.args, 90)),
      h('td', { class: 'status', 'data-testid': 'tool-status' }, invocation.status),
    );
    const old = this.rows.get(invocation.key);
    if (old) old.replaceWith(row);
    else this.body.append(row);
    this.rows.set(invocation.key, row);
  }
}

class SubagentNode {
  readonly element: HTMLElement;
  readonly tools = new ToolTable('no tool calls yet');
  private readonly name = h('span', { class: 'name', 'data-testid': 'subagent-name' });
  private readonly description = h('div', { class: 'description' });
  private readonly events = h('span', { class: 'events', 'data-testid': 'subagent-events' }, 'running');

  constructor(delegation: SubagentRun) {
    this.element = h(
      'li',
      { 'data-testid': 'subagent', 'data-key': delegation.key, 'data-state': 'running' },
      h(
        'div',
        { class: 'head' },
        this.name,
        h('span', { class: 'id', 'data-testid': 'subagent-id', title: delegation.key }, shortId(delegation.key)),
        this.events,
      ),
      this.description,
      this.tools.element,
    );
    this.rename(delegation);
  }

  /** A placeholder's name and short description are replaced once the real ones arrive. */
  rename(delegation: SubagentRun): void {
    if (this.name.textContent !== delegation.name) this.name.textContent = delegation.name;
    if (this.description.textContent !== delegation.description) this.description.textContent = delegation.description;
  }

  /** One of its calls is paused for a person: so is the sub-agent, and the `task` call that started it. */
  waiting(): void {
    this.element.dataset['state'] = 'awaiting-input';
  }

  end(events: number): void {
    if (this.element.dataset['state'] !== 'awaiting-input') this.element.dataset['state'] = 'ended';
    this.events.textContent = `${events} events`;
  }
}

/** The tool states a summary counts, in the order shown. */
const SUMMARY_STATUSES = ['succeeded', 'failed', 'awaiting-input', 'unfinished'] as const;

/** The summary's figures: tool calls by state, sub-agents, main-agent tokens, events. */
function figures(summary: RunSummary): HTMLElement {
  const tools = countToolCalls(summary.invocations);
  const figure = (testid: string, label: string, value: number) =>
    h('div', { class: 'figure' }, h('dt', {}, label), h('dd', { 'data-testid': testid }, number.format(value)));
  return h(
    'dl',
    { class: 'figures' },
    ...SUMMARY_STATUSES.map((status) => figure(`summary-tools-${status}`, `tools ${status}`, tools[status])),
    figure('summary-delegations', 'sub-agents', summary.delegations.length),
    figure('summary-tokens', 'main-agent tokens', summary.usage.totalTokens),
    figure('summary-events', 'events', summary.events),
  );
}

/** A titled list, or nothing when there is nothing to list. */
function list(attributes: Record<string, string>, title: string, items: HTMLElement[]): HTMLElement | undefined {
  return items.length === 0 ? undefined : h('div', attributes, h('h4', {}, title), h('ol', {}, ...items));
}

function questions(summary: RunSummary): HTMLElement | undefined {
  const items = summary.pendingQuestions
    .flatMap((event) => event.questions)
    .map((q) => {
      const choices = (q.choices ?? []).map((choice) => choice.value);
      return h(
        'li',
        { 'data-testid': 'question' },
        h('span', { 'data-testid': 'question-text' }, q.question),
        choices.length ? h('div', { class: 'choices' }, choices.join(' · ')) : undefined,
      );
    });
  return list({ class: 'pending', 'data-testid': 'questions' }, 'Questions for you', items);
}

function approvals(summary: RunSummary): HTMLElement | undefined {
  const items = summary.pendingApprovals
    .flatMap((event) => event.action_requests)
    .map((r) => h('li', { 'data-testid': 'approval' }, `${r.name} ${jsonPreview(r.args ?? {})}`));
  return list({ class: 'pending', 'data-testid': 'approvals' }, 'Approvals needed', items);
}

function panelItem(p: PanelDispatchSummary): HTMLElement {
  const icon = ICONS[p.status === 'completed' ? 'succeeded' : p.status];
  return h(
    'li',
    { 'data-testid': 'panel-dispatch', 'data-status': p.status },
    `${icon} ${p.label || p.id} · ${p.subagentType}`,
    p.durationMs === undefined ? '' : ` · ${seconds(p.durationMs)}`,
    p.error ? ` · ${p.error}` : '',
  );
}

/** The outcome, the summary's figures and what the run waits for. The one function that reads a `RunSummary`. */
export function renderSummary(summary: RunSummary): HTMLElement {
  const panels = summary.panelDispatches.map(panelItem);
  return h(
    'div',
    {},
    h('div', { class: `outcome ${summary.outcome}`, 'data-testid': 'outcome' }, summary.outcome),
    figures(summary),
    questions(summary),
    approvals(summary),
    summary.pendingQuestions.length + summary.pendingApprovals.length === 0
      ? undefined
      : h('p', { class: 'note' }, RESUME_NOTE),
    panels.length === 0
      ? undefined
      : h(
          'div',
          { class: 'panel', 'data-testid': 'panel-dispatches' },
          h('h4', {}, 'Panel dispatches'),
          h('ul', {}, ...panels),
        ),
    summary.errors.length === 0
      ? undefined
      : h('ul', { class: 'errors' }, ...summary.errors.map((e) => h('li', {}, e))),
  );
}

/** What resuming does, said where a run stops to ask. */
const RESUME_NOTE =
  'A run that resumes this thread sends its prompt as a new message; the paused call itself gets no answer.';

/** Which run this is: its id, its CLI (from the metadata the server recorded), and the thread it replies in. */
function meta(status: RunStatus): string {
  const scenario = scenarioOf(status);
  const cli = scenario ? `fake CLI: ${scenario}` : 'EvoSci';
  return `${status.id} · ${cli}${status.resumed === undefined ? '' : ` · reply in thread ${status.resumed}`}`;
}

/** A run's error as a line: its class and message (stderr stays on the server). */
function errorLine(status: RunStatus): string | undefined {
  return status.error && `${status.error.name}: ${status.error.message}`;
}

/** A run on the dashboard: its state, tool calls, sub-agent tree, text, usage and, at the end, its summary. */
export class RunCard {
  readonly element: HTMLElement;
  private readonly state = h('span', { class: 'state running', 'data-testid': 'run-state' }, 'running');
  private readonly cancelButton = h(
    'button',
    { type: 'button', 'data-testid': 'cancel' },
    'Cancel',
  ) as HTMLButtonElement;
  private readonly tools = new ToolTable('no tool calls yet');
  private readonly tree = h('ul', { class: 'tree', 'data-testid': 'subagents', 'data-empty': 'no sub-agents yet' });
  private readonly subagents = new Map<SubagentRun, SubagentNode>();
  private readonly text = h('div', { class: 'text', 'data-testid': 'text' });
  private readonly usage = {
    input: h('dd', { 'data-testid': 'tokens-input' }, '0'),
    output: h('dd', { 'data-testid': 'tokens-output' }, '0'),
    total: h('dd', { 'data-testid': 'tokens-total' }, '0'),
  };
  private readonly summary = h('section', { class: 'summary', 'data-testid': 'summary', hidden: '' });
  private readonly notes = h('ul', { class: 'errors', 'data-testid': 'notes' });
  private readonly reply: ReplyBox;
  private runError: string | undefined;
  private latest: RunStatus;
  private outcome: RunOutcome | undefined;

  /** `onReply` sends a reply in the thread of `origin` (this run) and says whether the next run started. */
  constructor(
    status: RunStatus,
    onCancel: (card: RunCard) => void,
    onReply: (origin: RunStatus, thread: string, text: string) => Promise<boolean>,
  ) {
    this.latest = status;
    this.reply = new ReplyBox((thread, text) => onReply(this.latest, thread, text));
    this.cancelButton.addEventListener('click', () => {
      this.cancelButton.disabled = true;
      onCancel(this);
    });
    const section = (title: string, ...children: Child[]) => h('section', {}, h('h3', {}, title), ...children);
    this.element = h(
      'article',
      { class: 'run', 'data-testid': 'run', 'data-run-id': status.id },
      h(
        'header',
        {},
        h('h2', {}, status.prompt),
        h('span', { class: 'meta' }, meta(status)),
        this.state,
        this.cancelButton,
      ),
      h(
        'div',
        { class: 'columns' },
        h('div', {}, section('Tool calls', this.tools.element), section('Sub-agents', this.tree)),
        h(
          'div',
          {},
          section('Response', this.text),
          section(
            'Main-agent tokens',
            h(
              'dl',
              { class: 'figures' },
              h('div', { class: 'figure' }, h('dt', {}, 'input'), this.usage.input),
              h('div', { class: 'figure' }, h('dt', {}, 'output'), this.usage.output),
              h('div', { class: 'figure' }, h('dt', {}, 'total'), this.usage.total),
            ),
          ),
          this.summary,
          this.reply.element,
          this.notes,
        ),
      ),
    );
    this.setStatus(status);
  }

  get id(): string {
    return this.element.dataset['runId'] ?? '';
  }

  apply(action: ViewAction): void {
    switch (action.kind) {
      case 'text':
        this.text.textContent = action.text;
        return;
      case 'tool': {
        if (!action.delegation) return this.tools.set(action.invocation);
        const node = this.subagents.get(action.delegation);
        node?.rename(action.delegation);
        node?.tools.set(action.invocation);
        if (action.invocation.status === 'awaiting-input') node?.waiting();
        return;
      }
      case 'subagent-start': {
        const node = new SubagentNode(action.delegation);
        this.subagents.set(action.delegation, node);
        this.tree.append(node.element);
        return;
      }
      case 'subagent-end': {
        const node = this.subagents.get(action.delegation);
        node?.rename(action.delegation);
        node?.end(action.events);
        return;
      }
      case 'usage':
        return this.setUsage(action.usage);
      case 'error':
        // Shown in the summary once the run ends; until then, as it comes.
        this.note(`error: ${action.event.message}`);
        return;
      case 'summary':
        this.summary.replaceChildren(h('h3', {}, 'Outcome'), renderSummary(action.summary));
        this.summary.hidden = false;
        this.outcome = action.summary.outcome;
        this.tools.ended();
        this.tree.dataset['empty'] = 'no sub-agents';
        return this.setStatus(this.latest);
    }
  }

  /** The server's view of the run: where it is, how it ended, the thread it reported. */
  setStatus(status: RunStatus): void {
    // Answers can cross: a run seen ended stays so.
    if (hasEnded(this.latest) && !hasEnded(status)) return;
    this.latest = status;
    // A run that ended by itself wears its outcome: one that stopped to ask is not "completed".
    const badge = status.state === 'completed' && this.outcome !== undefined ? this.outcome : status.state;
    this.state.textContent = badge;
    this.state.className = `state ${badge}`;
    this.cancelButton.disabled = hasEnded(status);
    const error = errorLine(status);
    if (error !== undefined && error !== this.runError) this.note(error);
    this.runError = error;
    if (status.threadId !== undefined && hasEnded(status)) this.reply.open(status.threadId, this.outcome);
  }

  diagnostic(issue: DecodeIssue): void {
    this.note(`line ${issue.line}: ${issue.message}`);
  }

  note(message: string): void {
    this.notes.append(h('li', {}, message));
  }

  private setUsage(usage: UsageTotals): void {
    this.usage.input.textContent = number.format(usage.inputTokens);
    this.usage.output.textContent = number.format(usage.outputTokens);
    this.usage.total.textContent = number.format(usage.totalTokens);
  }
}
