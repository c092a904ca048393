// followRun in a real Chromium, over the browser's own fetch and streams:
// a connection the server cuts mid-run is resumed, each event once.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { events as ev } from '../../testing/events.js';
import { hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { followInChromium } from '../support/followInChromium.js';
import { progressSigns, sseRunServer, type SseRunServer } from '../support/sseRunServer.js';

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
