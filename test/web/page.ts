// Driving the dashboard's page as a person would, for the browser tests.
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Scenario } from '../../examples/web/api.js';

/** Starts a run from the page's form; its card on the page, its id and the status of the server's answer. */
export async function startRun(
  page: Page,
  scenario: Scenario,
  speed: number,
): Promise<{ card: Locator; id: string; status: number }> {
  await page.getByTestId('scenario').selectOption(scenario);
  await page.getByTestId('speed').fill(String(speed));
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/runs'),
    page.getByTestId('start').click(),
  ]);
  // `POST /runs` answers the run's id; the page then asks for its status and shows its card.
  const { id } = (await response.json()) as { id: string };
  return { card: page.locator(`[data-testid="run"][data-run-id="${id}"]`), id, status: response.status() };
}

/** Resolves once the card shows `state`. */
export function waitForState(card: Locator, state: string): Promise<void> {
  return expect.poll(() => card.getByTestId('run-state').textContent(), { timeout: 30_000, interval: 100 }).toBe(state);
}
