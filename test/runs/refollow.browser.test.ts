// followRun in a real Chromium across a lost worker: a `runsHandler` over
// `jetStreamRunHub` serves a run whose worker process is SIGKILLed mid-run;
// the request goes to another worker as attempt 2, and a page following with
// `onRestart: 'refollow'` reads it again from its start, each event once,
// while one without it ends with the hub's RunRestartedError (409).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { lastValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jetStreamRunHub } from '../../src/jetstream/index.js';
import { RunRestartedError } from '../../src/runs/errors.js';
import { runsHandler, type RunHub } from '../../src/runs/index.js';
import { BROKER, suiteStreams } from '../jetstream/support.js';
import { stopWorkers, type WorkerProcess } from '../jetstream/workers.js';
import { hasChromium, launchChromium, type Chromium } from '../support/chromium.js';
import { followInChromium, type PageFollowOptions } from '../support/followInChromium.js';
import { startHubWorker } from '../support/hubWorkers.js';
import { gone } from '../support/processes.js';
import { DEMO, request, spawnsIn } from './scenarios.js';
import { call } from './sseClient.js';

/** The types of the demo transcript's events, in order: what attempt 2 plays whole. */
const DEMO_TYPES = readFileSync(DEMO, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { type: string }).type);
const ALL = DEMO_TYPES.map((_, i) => i);
/**
 * The workers' ack wait: how long a dead worker's request waits before it
 * goes to another. Their confirmations come every third of it, so a busy
 * machine would have to hold one back two seconds to start an attempt early.
 */
const ACK_WAIT_MS = 3000;

describe.skipIf(!hasChromium)('followRun in Chromium across a SIGKILLed JetStream worker', () => {
  const { prefix, connection } = suiteStreams('refollow');
  let browser: Chromium;
  let page: Page;
  let hub: RunHub;
  let server: Server;
  let runs: string;
  const workers: WorkerProcess[] = [];
  const dirs: string[] = [];
  /** What the handler could not answer with a status: the hub's follow failing after the stream's headers. */
  const reported: unknown[] = [];

  beforeAll(async () => {
    // The suite's broker has no users: the hub connects as the JetStream tests do.
    hub = jetStreamRunHub(connection(), { prefix });
    server = createServer(runsHandler(hub, { onError: (err) => reported.push(err) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    runs = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runs`;
    browser = await launchChromium();
    page = await browser.context.newPage();
  }, 60_000);
  afterEach(async () => {
    await stopWorkers(workers);
    workers.length = 0;
    reported.length = 0;
  });
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    server?.close();
    await hub?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A worker of the prefix, its CLIs' starts recorded in `dir`, serving. */
  async function worker(dir: string): Promise<WorkerProcess> {
    const started = startHubWorker(BROKER, prefix, dir, ACK_WAIT_MS);
    workers.push(started);
    await started.ready;
    return started;
  }

  const cases: { label: string; options: PageFollowOptions }[] = [
    {
      label: "onRestart: 'refollow' reads attempt 2 from its start, each event once",
      options: { onRestart: 'refollow' },
    },
    { label: 'without onRestart errors with RunRestartedError (409)', options: {} },
  ];
  it.each(cases)('a run whose worker is SIGKILLed mid-run: $label', async ({ options }) => {
    const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-refollow-'));
    dirs.push(dir);
    const first = await worker(dir);
    // A gated run: its CLI writes two events, then waits for `dir/go`, which attempt 1 never sees.
    const started = await call(runs, 'POST', request('gated'));
    expect(started.status).toBe(201);
    const id = String(started.body['id']);

    let sawAttempt1!: () => void;
    const seenTwo = new Promise<void>((resolve) => (sawAttempt1 = resolve));
    const url = `${runs}/${id}/events`;
    const following = followInChromium(page, url, options, (index) => index === 1 && sawAttempt1(), {
      errorStatus: true,
      restartAttempts: true,
    });
    await seenTwo;

    // The host is lost: the worker, and the CLI's process group with it.
    const [cli, ...more] = spawnsIn(dir);
    expect(more).toEqual([]);
    first.child.kill('SIGKILL');
    await first.exited;
    try {
      process.kill(-cli!.pid, 'SIGKILL');
    } catch (err) {
      // The lifeline may have stopped the group already.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    expect(await gone(cli!.pid)).toBe(true);

    // Attempt 2's CLI passes the gate: it plays the whole transcript.
    writeFileSync(join(dir, 'go'), '');
    const second = await worker(dir);
    const followed = await following;
    // Attempt 2 ran to its end on the second worker (read here, in the test's process).
    await lastValueFrom(hub.follow(id));
    const context = JSON.stringify({ first: first.activity, second: second.activity, stderr: second.stderr() });
    expect(spawnsIn(dir), context).toHaveLength(2);
    expect(second.activity, context).toContainEqual(
      expect.objectContaining({ type: 'started', runId: id, attempt: 2 }),
    );
    expect(await hub.status(id)).toMatchObject({ state: 'completed', events: DEMO_TYPES.length });
    // The stream of attempt 1 ended with the restart, once; the page's follow of attempt 2 ended with the run.
    expect(reported).toEqual([new RunRestartedError(id, 2)]);
    expect(reported[0]).toMatchObject({ attempt: 2, status: 409 });

    if (options.onRestart === 'refollow') {
      expect(followed, context).toEqual({
        indexes: [0, 1, -1, ...ALL],
        types: [...DEMO_TYPES.slice(0, 2), 'restart', ...DEMO_TYPES],
        completed: true,
        restartAttempts: [2],
      });
    } else {
      const { name, message } = new RunRestartedError(id, 2);
      expect(followed, context).toEqual({
        indexes: [0, 1],
        types: DEMO_TYPES.slice(0, 2),
        completed: false,
        error: { name, message, status: 409 },
        restartAttempts: [],
      });
    }
  });
});
