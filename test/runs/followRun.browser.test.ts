// followRun in a real Chromium, over the browser's own fetch and streams:
// a connection the server cuts mid-run is resumed, each event once; a link
// down for half a minute is ridden out; a restarted run is read again.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { events as ev } from '../../testing/events.js';
import { hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { followInChromium } from '../support/followInChromium.js';
import { progressSigns, sseRunServer, type SseRunServer } from '../support/sseRunServer.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { RunRestartedError } from '../../src/runs/errors.js';

const data = Array.from({ length: 8 }, (_, i) => JSON.stringify(i === 7 ? ev.done('answer') : ev.text(`piece ${i} `)));

describe.skipIf(!hasChromium)('followRun in Chromium', () => {
  let browser: Chromium;
  let page: Page;
  let server: SseRunServer | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
  }, 60_000);
  afterAll(() => browser?.close());
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('resumes after the server cuts the connection twice mid-run: every event once, in order, then completes', async () => {
    // Chromium drops what the page had not read when a connection fails: each cut waits for the page's sign it has it all.
    const progress = progressSigns();
    const answers = [
      { cutAfter: 3, cutWhen: progress.reached(2) },
      { cutAfter: 2, cutWhen: progress.reached(4) },
    ];
    server = await sseRunServer({ events: data, answers });
    const followed = await followInChromium(page, server.url, { retryDelayMs: 0 }, progress.report);
    expect(followed).toEqual({
      indexes: [0, 1, 2, 3, 4, 5, 6, 7],
      types: [...Array<string>(7).fill('text'), 'done'],
      completed: true,
    });
    expect(server.requests.map((r) => r.lastEventId)).toEqual([undefined, '2', '4']);
  });

  it('rides out a link down for 30 s with the default options: every event once, in order, then completes', async () => {
    // A real outage, as long as a deploy's restart: the hub is refused at every try until it comes back.
    const progress = progressSigns();
    server = await sseRunServer({ events: data, answers: [{ silentAfter: 4 }] });
    const proxy = await TcpProxy.start(new URL(server.url).host);
    try {
      const outage = progress.reached(3).then(async () => {
        proxy.refuse();
        await new Promise((resolve) => setTimeout(resolve, 30_000));
        proxy.resume();
      });
      const followed = await followInChromium(page, `http://${proxy.url}/runs/run-1/events`, {}, progress.report);
      await outage;
      expect(followed).toEqual({
        indexes: [0, 1, 2, 3, 4, 5, 6, 7],
        types: [...Array<string>(7).fill('text'), 'done'],
        completed: true,
      });
      expect(server.requests.map((r) => r.lastEventId)).toEqual([undefined, '3']);
      // It kept trying through the outage (within 3 s of the cut, twice at least), rather than waiting it out once.
      expect(proxy.refused).toBeGreaterThanOrEqual(2);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("reads a run restarted on another worker again with onRestart: 'refollow', and errors with its class without", async () => {
    const { name, message } = new RunRestartedError('run-1', 2);
    // The first connection of each follow hears of the restart; the one after it reads the run from its start.
    const restarted = { ending: { error: { name, message } } };
    server = await sseRunServer({ events: data.slice(0, 2), answers: [restarted, restarted] });
    const plain = await followInChromium(page, server.url, { retryDelayMs: 0 });
    expect(plain).toEqual({ indexes: [0, 1], types: ['text', 'text'], completed: false, error: { name, message } });
    const again = await followInChromium(page, server.url, { retryDelayMs: 0, onRestart: 'refollow' });
    expect(again).toEqual({
      indexes: [0, 1, -1, 0, 1],
      types: ['text', 'text', 'restart', 'text', 'text'],
      completed: true,
    });
  });

  it('errors with the error class of a failed run', async () => {
    const error = { name: 'ExitError', message: 'EvoSci exited with code 2', exitCode: 2 };
    server = await sseRunServer({ events: data.slice(0, 2), ending: { end: { state: 'failed', error } } });
    const followed = await followInChromium(page, server.url);
    expect(followed).toEqual({
      indexes: [0, 1],
      types: ['text', 'text'],
      completed: false,
      error: { name: 'ExitError', message: error.message },
    });
  });
});
