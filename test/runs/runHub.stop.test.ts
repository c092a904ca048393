// A run stopped at any point of its start, by `cancel()`, `close()` or a
// DELETE: its end is written only once no process of it can exist, and a
// stop that comes before the spawn means the CLI never starts.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirStore } from '../../src/runs/DirStore.js';
import { runHubOn } from '../../src/runs/LocalRunHub.js';
import { memoryStore } from '../../src/runs/MemoryStore.js';
import { runHub, runsHandler, type RunHub } from '../../src/runs/index.js';
import type { StoredRun } from '../../src/runs/RunStore.js';
import type { RunStatus } from '../../src/runs/wire.js';
import { request, scenarioRunOptions } from './scenarios.js';
import { call } from './sseClient.js';
import { HoldingStore } from './holdingStore.js';

/** Throws unless `pid` is gone: `kill(pid, 0)` fails with ESRCH (a zombie not yet reaped would still answer). */
function expectGone(pid: number): void {
  expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }) as Error);
}

/** Kills what a failing test left running: each process group recorded. */
function killLeft(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Resolves once the run read an event: a sign that its process went on. */
async function ranOn(hub: RunHub, id: string): Promise<'ran on'> {
  while ((await hub.status(id)).events === 0) await new Promise((resolve) => setTimeout(resolve, 25));
  return 'ran on';
}

type Stop = 'cancel' | 'close';
const ENDED: Record<Stop, Partial<RunStatus>> = {
  cancel: { state: 'cancelled', error: expect.objectContaining({ name: 'CancelledError' }) as never },
  close: { state: 'interrupted', error: expect.objectContaining({ name: 'RunInterruptedError' }) as never },
};

describe.each(['memory', 'a directory'])('runHub in %s, stopped as a run starts', (home) => {
  let dir: string;
  let store: HoldingStore;
  let hub: RunHub;
  /** The pids the hub reported spawning, in order. */
  let pids: number[];
  /** What the test does as the hub reports a spawn, with the run's id. */
  let onSpawn: (id: string) => void;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-stop-'));
    pids = [];
    onSpawn = () => undefined;
    store = new HoldingStore(home === 'memory' ? memoryStore : new DirStore(join(dir, 'runs'), () => undefined));
    const scenario = scenarioRunOptions(dir);
    hub = await runHubOn(store, {
      runOptions: (startRequest, id) => ({
        ...scenario(startRequest),
        onSpawn: (pid) => {
          pids.push(pid);
          onSpawn(id);
        },
      }),
    });
  });
  afterEach(async () => {
    store.release();
    killLeft(pids);
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stop = (how: Stop, id: string): Promise<unknown> => (how === 'cancel' ? hub.cancel(id) : hub.close());

  /** The run's status as the hub tells it and, in a directory, as its file holds it. */
  async function expectEnded(id: string, how: Stop): Promise<void> {
    expect(await hub.status(id)).toMatchObject(ENDED[how]);
    if (home === 'memory') return;
    const stored = JSON.parse(readFileSync(join(dir, 'runs', `${id}.json`), 'utf8')) as StoredRun;
    expect(stored.status).toMatchObject(ENDED[how]);
  }

  it.each<Stop>(['cancel', 'close'])('%s while its record is being saved: its CLI never starts', async (how) => {
    store.holding = true;
    const starting = hub.start(request('gated'));
    const [listed] = await hub.list();
    const stopped = stop(how, listed!.id);
    store.release();
    expect(await starting).toEqual({ id: listed!.id, created: true });
    await stopped;
    expect(pids).toEqual([]);
    await expectEnded(listed!.id, how);
    expect(pids).toEqual([]);
  });

  it.each<Stop>(['cancel', 'close'])(
    '%s as its process is spawned: the process is stopped, and gone when it resolves',
    async (how) => {
      let stopped: Promise<unknown> | undefined;
      onSpawn = (id) => {
        stopped ??= stop(how, id);
      };
      const { id } = await hub.start(request('gated'));
      expect(pids).toHaveLength(1);
      // Stopped, it reads nothing; left running, it writes its first events and waits for a file never written.
      expect(await Promise.race([stopped!.then(() => 'stopped'), ranOn(hub, id)])).toBe('stopped');
      expectGone(pids[0]!);
      await expectEnded(id, how);
    },
  );

  it.each<Stop>(['cancel', 'close'])('%s once it has started: its process is gone when it resolves', async (how) => {
    const { id } = await hub.start(request('gated'));
    await stop(how, id);
    expect(pids).toHaveLength(1);
    expectGone(pids[0]!);
    await expectEnded(id, how);
  });

  it.each<Stop>(['cancel', 'close'])('%s while its end is being saved: resolves once it is saved', async (how) => {
    const { id } = await hub.start(request('gated'));
    store.holding = true;
    const stopped = stop(how, id);
    let settled = false;
    void stopped.then(() => (settled = true));
    // Its process is gone, its end held: the stop waits for the end.
    await whenGone(pids[0]!);
    expect(settled).toBe(false);
    store.release();
    await stopped;
    expectGone(pids[0]!);
    await expectEnded(id, how);
  });
});

/** Resolves once `pid` is gone. */
async function whenGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('runHub in a directory behind runsHandler', () => {
  let dir: string;
  let server: Server;
  let hub: RunHub;
  let pids: number[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-delete-'));
    pids = [];
    const scenario = scenarioRunOptions(dir);
    hub = await runHub({
      dir: join(dir, 'runs'),
      maxLive: 30,
      runOptions: (startRequest) => ({ ...scenario(startRequest), onSpawn: (pid) => pids.push(pid) }),
    });
    server = createServer(runsHandler(hub));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    killLeft(pids);
    await hub.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a DELETE that lands as its run starts only once no process of the run is left', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runs`;
    const answers: unknown[] = [];
    for (let i = 0; i < 30; i++) {
      const prompt = `run ${i}`;
      const posted = call(url, 'POST', request('gated', prompt));
      let listed: RunStatus | undefined;
      while (!listed)
        listed = ((await call(url, 'GET')).body as unknown as RunStatus[]).find((r) => r.prompt === prompt);
      const deleted = await call(`${url}/${listed.id}`, 'DELETE');
      answers.push([deleted.status, deleted.body['state']]);
      expect((await posted).status).toBe(201);
    }
    expect(answers).toEqual(Array.from({ length: 30 }, () => [200, 'cancelled']));
    for (const pid of pids) expectGone(pid);
  });
});

describe('runHub whose runOptions run() refuses', () => {
  it('refuses the start with the TypeError, and holds no run that would keep close() waiting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-refused-'));
    const hub = await runHub({ dir, runOptions: (startRequest) => ({ prompt: startRequest.prompt, timeoutMs: -1 }) });
    await expect(hub.start({ prompt: 'a run' })).rejects.toThrow(TypeError);
    expect(await hub.list()).toEqual([]);
    // Nothing recorded: a hub opened again on the directory finds nothing either.
    expect(readdirSync(dir)).toEqual([]);
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
