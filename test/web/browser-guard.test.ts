// The dashboard's guard as a browser meets it, in a real Chromium: a page of
// another origin tries what any web page can (a text/plain form, a no-cors
// fetch, a JSON fetch that needs a preflight) and starts nothing; the link a
// dashboard beyond loopback prints opens its page, which then works.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardServer } from '../../examples/web/server.js';
import { hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { isAlive } from '../support/processes.js';
import { startRun } from './page.js';

/** A page of another origin that tries to start a run on `target` every way a page can, and says when it is done. */
function hostilePage(target: string): string {
  // A start the dashboard would take from its own page.
  const body = JSON.stringify({ prompt: 'x', metadata: { scenario: 'slow' } });
  return `<!doctype html><title>elsewhere</title>
<form id="f" method="POST" action="${target}runs" enctype="text/plain" target="sink">
  <input name='{"metadata":{"scenario":"slow"},"prompt":"' value='x"}'></form>
<iframe name="sink" id="sink"></iframe>
<script>
  const tries = [
    fetch('${target}runs', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '${body}' })
      .then(() => 'sent', (e) => 'refused: ' + e),
    fetch('${target}runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '${body}' })
      .then((r) => 'answered ' + r.status, (e) => 'refused: ' + e),
    fetch('${target}runs').then((r) => r.text(), (e) => 'refused: ' + e),
    new Promise((resolve) => {
      document.getElementById('sink').onload = () => resolve('form sent');
      document.getElementById('f').submit();
    }),
  ];
  Promise.all(tries).then((results) => { window.results = results; document.title = 'done'; });
</script>`;
}

async function serve(html: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

describe.skipIf(!hasChromium)("the dashboard's guard in Chromium", () => {
  let browser: Chromium;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
  }, 60_000);
  afterAll(() => browser?.close());

  it('a page of another origin starts, reads and learns nothing', async () => {
    const dashboard = await startDashboardServer();
    const hostile = await serve(hostilePage(dashboard.url));
    try {
      await page.goto(hostile.url);
      await page.waitForFunction("document.title === 'done'", undefined, { timeout: 30_000 });
      const results = await page.evaluate<string[]>('window.results');
      // The JSON fetch needs a preflight the dashboard never grants; the read is refused by the same-origin rule.
      expect(results[1]).toMatch(/^refused/);
      expect(results[2]).toMatch(/^refused/);
      expect(await dashboard.hub.list()).toEqual([]);
    } finally {
      hostile.server.close();
      await dashboard.close();
    }
  }, 60_000);

  it('beyond loopback, the printed link opens the page, whose requests then carry the token', async () => {
    const dashboard = await startDashboardServer({ host: '0.0.0.0' });
    try {
      const port = new URL(dashboard.url).port;
      const link = `http://127.0.0.1:${port}/?token=${dashboard.token}`;
      expect((await page.goto(`http://127.0.0.1:${port}/`))?.status()).toBe(401);
      await page.goto(link);
      const { card, status } = await startRun(page, 'needs-input', 20);
      expect(status).toBe(201);
      await expect
        .poll(() => card.getByTestId('outcome').textContent(), { timeout: 30_000, interval: 100 })
        .toBe('needs-input');
    } finally {
      const pids = [...dashboard.processes.values()];
      await dashboard.close();
      expect(pids.filter(isAlive)).toEqual([]);
    }
  }, 60_000);
});
