// The web dashboard of examples/web in a real Chromium: what a person sees
// while a run streams and at its end, checked against summarize() of the
// same transcript in Node, and the Cancel button stopping the run's process.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJsonl, type RunStatus } from '../../src/index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { startDashboardServer, type DashboardServer } from '../../examples/web/server.js';
import { scenarioSteps } from '../../examples/web/scenarios.js';
import { transcript } from '../../examples/evosciCommand.js';
import { CHROMIUM, hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { startRun, waitForState } from './page.js';
import { isAlive } from '../support/processes.js';

const SCREENSHOTS = fileURLToPath(new URL('./.screenshots/', import.meta.url));
const STATUSES = ['succeeded', 'failed', 'unfinished'] as const;

if (!hasChromium)
  console.warn(
    `test/web/dashboard.test.ts skipped: no ${CHROMIUM}; install it with \`apt-get install -y chromium\` (.ci/run does)`,
  );

function expectedSummary(name: string): Promise<RunSummary> {
  return lastValueFrom(fromJsonl(readFileSync(transcript(name))).pipe(summarize()));
}

/** The summary's tool calls by status, `task` calls aside: the page shows those as sub-agents. */
function toolsByStatus(summary: RunSummary): Record<(typeof STATUSES)[number], number> {
  const tools = summary.invocations.filter((i) => i.name !== 'task');
  return Object.fromEntries(STATUSES.map((s) => [s, tools.filter((i) => i.status === s).length])) as Record<
    (typeof STATUSES)[number],
    number
  >;
}

/** A figure as the page prints it, `69,015` → 69015. */
async function figure(card: Locator, testid: string): Promise<number> {
  return Number((await card.getByTestId(testid).textContent())?.replace(/,/g, ''));
}

/** What a finished run's card shows, against summarize() of the same transcript. */
async function expectFinishedCard(card: Locator, expected: RunSummary): Promise<void> {
  // Each tool call (main agent and sub-agents) is one row, by status.
  const byStatus = toolsByStatus(expected);
  for (const status of STATUSES) {
    expect(await card.locator(`[data-testid="tool-row"][data-status="${status}"]`).count(), `${status} rows`).toBe(
      byStatus[status],
    );
    expect(await figure(card, `summary-tools-${status}`), `${status} in the summary`).toBe(byStatus[status]);
  }
  expect(await card.locator('[data-testid="tool-row"][data-status="running"]').count()).toBe(0);
  // The stream carries no times: no call shows a made-up duration.
  expect(await card.getByTestId('tool-row').allTextContents()).not.toContainEqual(expect.stringMatching(/\d s$/));

  // The sub-agent tree: one node per delegation, with its name and event count.
  const subagents = card.getByTestId('subagent');
  expect(await subagents.count()).toBe(expected.delegations.length);
  expect(await subagents.getByTestId('subagent-name').allTextContents()).toEqual(
    expected.delegations.map((d) => d.name),
  );
  expect(await subagents.getByTestId('subagent-events').allTextContents()).toEqual(
    expected.delegations.map((d) => `${d.events} events`),
  );
  expect(await figure(card, 'summary-delegations')).toBe(expected.delegations.length);
  // Ids short, the whole one in the tooltip.
  for (const id of await subagents.getByTestId('subagent-id').all()) {
    expect(await id.textContent()).toMatch(/^…?[\w-]{1,8}$/);
    expect(await id.getAttribute('title')).toMatch(/^task:toolu_/);
  }

  expect(await figure(card, 'tokens-input')).toBe(expected.usage.inputTokens);
  expect(await figure(card, 'tokens-output')).toBe(expected.usage.outputTokens);
  expect(await figure(card, 'tokens-total')).toBe(expected.usage.totalTokens);
  expect(await figure(card, 'summary-tokens')).toBe(expected.usage.totalTokens);
  expect(await figure(card, 'summary-events')).toBe(expected.events);
  expect(await card.getByTestId('text').textContent()).toBe(expected.response);
  expect(await card.getByTestId('outcome').textContent()).toBe('completed');
  expect(
    await card.getByTestId('panel-dispatch').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))),
  ).toEqual(expected.panelDispatches.map((p) => p.status));
  expect(await card.getByTestId('panel-dispatches').textContent()).toContain(expected.panelDispatches[0]!.label);
}

/** What the card of a run that stopped to ask shows, against summarize() of the same transcript. */
async function expectQuestionsCard(card: Locator, expected: RunSummary): Promise<void> {
  await card.getByTestId('outcome').waitFor();
  expect(await card.getByTestId('outcome').textContent()).toBe('needs-input');
  // The badge follows the outcome: not a green "completed".
  expect(await card.getByTestId('run-state').textContent()).toBe('needs-input');
  expect(await card.getByTestId('subagents').getAttribute('data-empty')).toBe('no sub-agents');
  const questions = expected.questions.flatMap((e) => e.questions).map((q) => (q as { question: string }).question);
  expect(questions.length).toBeGreaterThan(0);
  expect(await card.getByTestId('question-text').allTextContents()).toEqual(questions);
  expect(await card.getByTestId('text').textContent()).toBe(expected.response);
  expect(await figure(card, 'tokens-total')).toBe(expected.usage.totalTokens);
}

describe.skipIf(!hasChromium)('the web dashboard in Chromium', () => {
  let server: DashboardServer;
  let browser: Chromium;
  let page: Page;
  const pageErrors: string[] = [];
  // Every start of the fake CLI, as one JSON line with its argv.
  const starts = join(mkdtempSync(join(tmpdir(), 'evosci-rx-dashboard-')), 'starts.jsonl');
  const argvs = () =>
    readFileSync(starts, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { argv: string[] }).argv);

  const info = async (id: string): Promise<RunStatus> =>
    (await fetch(`${server.url}runs/${id}`)).json() as Promise<RunStatus>;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startDashboardServer({
      scenarioSteps: (scenario, speed) => [{ record: starts, append: true }, ...scenarioSteps(scenario, speed)],
    });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.goto(server.url);
  }, 60_000);

  afterAll(async () => {
    const pids = server ? [...server.processes.values()] : [];
    await browser?.close();
    await server?.close();
    // No run's process outlives the server.
    expect(pids.filter(isAlive)).toEqual([]);
  }, 60_000);

  it('says what to do on a first load with no runs', async () => {
    const empty = page.getByTestId('empty');
    expect(await empty.isVisible()).toBe(true);
    expect(await empty.textContent()).toContain('Start run');
    expect(await page.getByTestId('run').count()).toBe(0);
  });

  it('shows tool calls while the run streams, and at its end the numbers of summarize() in Node', async () => {
    const expected = await expectedSummary('demo-run.jsonl');
    const { card, id } = await startRun(page, 'demo', 2);

    // While it streams: rows are there, the run is still going, no summary yet.
    await card.getByTestId('tool-row').first().waitFor({ timeout: 15_000 });
    const rowsWhileStreaming = await card.getByTestId('tool-row').count();
    expect((await info(id)).state).toBe('running');
    expect(await card.getByTestId('run-state').textContent()).toBe('running');
    expect(await card.getByTestId('summary').isHidden()).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}dashboard-streaming.png`, fullPage: true });

    await waitForState(card, 'completed');
    await card.getByTestId('outcome').waitFor();
    const rows = card.getByTestId('tool-row');
    expect(await rows.count()).toBeGreaterThan(rowsWhileStreaming);

    await expectFinishedCard(card, expected);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('shows the questions of a run that needs input', async () => {
    const expected = await expectedSummary('interrupt-run.jsonl');
    const { card } = await startRun(page, 'needs-input', 4);
    await waitForState(card, 'needs-input');
    await expectQuestionsCard(card, expected);
  }, 60_000);

  it('sends a reply from the page as the next turn of the thread: a run with --resume', async () => {
    const { card, id } = await startRun(page, 'needs-input', 4);
    await waitForState(card, 'needs-input');
    // The box shows once the process has exited and printed its thread.
    const box = card.getByTestId('reply');
    await box.waitFor({ timeout: 30_000 });
    expect(await box.getByTestId('reply-note').textContent()).toContain('not as the answer');
    const answer = 'Use ImageNet-1k, with at most 4 GPU hours';
    await box.getByTestId('reply-text').fill(answer);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/runs'),
      box.getByTestId('reply-send').click(),
    ]);
    expect(response.status()).toBe(201);
    const next = (await response.json()) as { id: string };
    // The reply runs as the run whose thread it resumes: its scenario, its speed.
    expect(await info(next.id)).toMatchObject({
      resumed: 'demo-5b21e0',
      prompt: answer,
      metadata: { scenario: 'needs-input', speed: '4' },
    });
    expect((await info(id)).threadId).toBe('demo-5b21e0');

    const nextCard = page.locator(`[data-testid="run"][data-run-id="${next.id}"]`);
    await waitForState(nextCard, 'completed');
    expect(await nextCard.getByTestId('run-state').textContent()).toBe('completed');
    // Auto mode is the server's choice for the scenario, never the request's.
    expect(argvs()).toContainEqual(
      expect.arrayContaining(['--resume=demo-5b21e0', `--prompt=${answer}`, '--no-auto-mode']),
    );
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('shows the calls of two sub-agents stopped for approval, and their sub-agents, as awaiting input', async () => {
    const expected = await expectedSummary('parallel-approvals.jsonl');
    const { card } = await startRun(page, 'sub-agent-approvals', 4);
    await waitForState(card, 'needs-input');
    await card.getByTestId('outcome').waitFor();
    expect(await card.getByTestId('outcome').textContent()).toBe('needs-input');
    const subagents = card.getByTestId('subagent');
    expect(await subagents.count()).toBe(2);
    for (const node of await subagents.all()) {
      expect(await node.getAttribute('data-state')).toBe('awaiting-input');
      expect(await node.getByTestId('tool-status').allTextContents()).toEqual(['awaiting-input']);
    }
    expect(await card.getByTestId('approval').count()).toBe(expected.pendingApprovals.length);
    expect(await figure(card, 'summary-tools-awaiting-input')).toBe(2);
    expect(await card.getByTestId('summary').textContent()).toContain('the paused call itself gets no answer');
  }, 60_000);

  it('stops the run on the server when Cancel is clicked: its process is gone', async () => {
    const { card, id } = await startRun(page, 'slow', 2);
    await card.getByTestId('tool-row').first().waitFor({ timeout: 15_000 });
    expect((await info(id)).state).toBe('running');
    const pid = server.processes.get(id);
    expect(pid).toBeTypeOf('number');
    expect(isAlive(pid!)).toBe(true);

    // The server answers the page's DELETE once the process has exited.
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === `/runs/${id}`),
      card.getByTestId('cancel').click(),
    ]);
    expect(await response.json()).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(isAlive(pid!)).toBe(false);
    await waitForState(card, 'cancelled');
    expect(await info(id)).toMatchObject({ state: 'cancelled' });
    expect(await card.getByTestId('cancel').isDisabled()).toBe(true);
    // The stream ended without `done`.
    await card.getByTestId('outcome').waitFor();
    expect(await card.getByTestId('outcome').textContent()).toBe('incomplete');

    await page.screenshot({ path: `${SCREENSHOTS}dashboard.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
