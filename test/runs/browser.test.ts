// Readers in a real Chromium against a real hub and handler: a followRun
// whose connection is cut mid-run, and a naive EventSource with no `end`
// listener, which the handler stops with a 204 once it has seen the end.
// Each makes one process.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { lastValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runHub, runsHandler, type RunHub } from '../../src/runs/index.js';
import { hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { followInChromium } from '../support/followInChromium.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';
import { call } from './sseClient.js';

/** The requests for a run's events the server has seen, with their Last-Event-ID and status; and a way to cut the live ones. */
class EventsRequests {
  readonly seen: (string | undefined)[] = [];
  /** The status each was answered with, once its answer was sent whole. */
  readonly statuses: number[] = [];
  private readonly live = new Set<ServerResponse>();
  private waiters: (() => void)[] = [];

  track(req: IncomingMessage, res: ServerResponse): void {
    if (!/\/events/.test(req.url ?? '')) return;
    const at = this.seen.push(req.headers['last-event-id'] as string | undefined) - 1;
    this.live.add(res);
    res.on('close', () => this.live.delete(res));
    res.on('finish', () => {
      this.statuses[at] = res.statusCode;
      this.wake();
    });
    this.wake();
  }

  /** Cuts every live events connection, as a network drop does. */
  cut(): void {
    for (const res of this.live) res.socket?.destroy();
  }

  async count(n: number): Promise<void> {
    while (this.seen.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once a request has been answered with `status`. */
  async answered(status: number): Promise<void> {
    while (!this.statuses.includes(status)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

describe.skipIf(!hasChromium)('readers in Chromium of a run the hub started once', () => {
  let browser: Chromium;
  let page: Page;
  let dir: string;
  let hub: RunHub;
  let server: Server;
  let requests: EventsRequests;
  let base: string;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-browser-'));
    hub = await runHub({ runOptions: scenarioRunOptions(dir) });
    requests = new EventsRequests();
    const handler = runsHandler(hub);
    server = createServer((req, res) => {
      requests.track(req, res);
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    page = await browser.context.newPage();
  });
  afterEach(async () => {
    await page.close();
    await hub.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('followRun across a connection cut mid-run: each event once, in order, one process', async () => {
    const { body } = await call(`${base}/runs`, 'POST', request('gated'));
    const url = `${base}/runs/${String(body['id'])}/events`;
    let cut = false;
    const followed = followInChromium(page, url, { retryDelayMs: 0 }, (index) => {
      // The page has the run's first two events: the network drops, then the run goes on.
      if (index !== 1 || cut) return;
      cut = true;
      requests.cut();
      void requests.count(2).then(() => writeFileSync(join(dir, 'go'), ''));
    });
    const { indexes, completed } = await followed;
    expect(completed).toBe(true);
    expect(indexes).toEqual(Array.from({ length: DEMO_EVENTS }, (_, i) => i));
    expect(requests.seen).toEqual([undefined, '1']);
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('an EventSource on a finished run reads it once, reconnects once after its end, is answered 204 and stops', async () => {
    const { body } = await call(`${base}/runs`, 'POST', request('demo'));
    const id = String(body['id']);
    await lastValueFrom(hub.follow(id), { defaultValue: undefined });
    const url = `${base}/runs/${id}/events`;
    await page.route(`${base}/blank`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html>' }));
    await page.goto(`${base}/blank`);
    await page.evaluate((source) => {
      const scope = globalThis as unknown as { messages: number; es: EventSource; stopped: Promise<boolean> };
      scope.messages = 0;
      scope.es = new EventSource(source);
      scope.es.onmessage = () => scope.messages++;
      // An EventSource fires `error` as it reconnects too; only a failed connection leaves it CLOSED.
      scope.stopped = new Promise((resolve) =>
        scope.es.addEventListener('error', () => scope.es.readyState === EventSource.CLOSED && resolve(true)),
      );
    }, url);
    // The end's id is the run's event count: the reconnection asks for what comes after it, and is told 204.
    await requests.answered(204);
    const { stopped, readyState, messages } = await page.evaluate(async () => {
      const scope = globalThis as unknown as { messages: number; es: EventSource; stopped: Promise<boolean> };
      return { stopped: await scope.stopped, readyState: scope.es.readyState, messages: scope.messages };
    });
    expect([stopped, readyState]).toEqual([true, 2]);
    expect(requests.seen).toEqual([undefined, String(DEMO_EVENTS)]);
    expect(requests.statuses).toEqual([200, 204]);
    expect(messages).toBe(DEMO_EVENTS);
    expect(spawnsIn(dir)).toHaveLength(1);
  });
});
