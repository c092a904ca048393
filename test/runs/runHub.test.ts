// What the embedded hub adds to the contract: its bounds, and a directory
// that outlives the process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, lastValueFrom, map, tap, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toJsonl } from '../../src/events/decode/jsonl.js';
import type { DecodeIssue } from '../../src/events/errors.js';
import {
  ForgottenRunError,
  HubClosedError,
  HubFullError,
  RunInterruptedError,
  runHub,
  type RunHub,
} from '../../src/runs/index.js';
import type { StoredRun } from '../../src/runs/RunStore.js';
import { eventually, gone } from '../support/processes.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Resolves `true` once the hub lists exactly these runs. */
async function listed(hub: RunHub, ids: readonly string[]): Promise<boolean> {
  const same = async () => JSON.stringify((await hub.list()).map((s) => s.id)) === JSON.stringify(ids);
  for (let tries = 0; tries < 1200 && !(await same()); tries++) await new Promise((r) => setTimeout(r, 25));
  return same();
}

/**
 * Starts a run in a hub of its own process on `runs` (see hubProcess.ts),
 * SIGKILLs that process once the directory holds what it waits for, and
 * resolves with the run's id once its CLI is gone too (its lifeline).
 */
async function runInKilledHub(dir: string, runs: string, ...scenario: string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/runs/hubProcess.ts', dir, runs, ...scenario], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) => child.stdout.setEncoding('utf8').once('data', resolve));
  const { id } = JSON.parse(line) as { id: string };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  expect(await gone(spawnsIn(dir)[0]!.pid)).toBe(true);
  return id;
}

/** When the hub last wrote a run's files. */
const lastWritten = (runs: string, id: string) =>
  Math.max(...[`${id}.jsonl`, `${id}.json`].map((name) => statSync(join(runs, name)).mtimeMs));

const ISO_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A run's events as the JSONL a reader is sent. */
const jsonlOf = (hub: RunHub, id: string) =>
  lastValueFrom(
    hub.follow(id).pipe(
      map(({ event }) => toJsonl(event)),
      toArray(),
    ),
  ).then((lines) => lines.join(''));

describe('runHub', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a start past maxLive, never queues it, and takes one again once a run has ended', async () => {
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), maxLive: 2 });
    const a = await hub.start(request('slow'));
    const b = await hub.start(request('slow'));
    await Promise.all([firstValueFrom(hub.follow(a.id)), firstValueFrom(hub.follow(b.id))]);
    await expect(hub.start(request('slow'))).rejects.toThrow(HubFullError);
    expect(spawnsIn(dir)).toHaveLength(2);
    await hub.cancel(a.id);
    const c = await hub.start(request('demo'));
    await lastValueFrom(hub.follow(c.id));
    await hub.close();
    await expect(hub.start(request('demo'))).rejects.toThrow(HubClosedError);
    expect(spawnsIn(dir)).toHaveLength(3);
  });

  it('forgets the oldest finished runs past keepFinished, never a live one, and says so', async () => {
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), keepFinished: 1 });
    const live = await hub.start(request('slow'));
    await firstValueFrom(hub.follow(live.id));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = await hub.start(request('demo', `run ${i}`), { idempotencyKey: `k${i}` });
      await lastValueFrom(hub.follow(id));
      ids.push(id);
    }
    // A finished run is forgotten once its process is gone too.
    expect(await listed(hub, [live.id, ids[2]!])).toBe(true);
    await expect(hub.status(ids[0]!)).rejects.toThrow(ForgottenRunError);
    await expect(lastValueFrom(hub.follow(ids[1]!))).rejects.toThrow(ForgottenRunError);
    // A late retry of a forgotten run's key starts nothing.
    expect(await hub.start(request('demo', 'run 0'), { idempotencyKey: 'k0' })).toEqual({
      id: ids[0],
      created: false,
    });
    expect(spawnsIn(dir)).toHaveLength(4);
    await hub.close();
  });

  it('forgets the oldest finished runs past keepBytes', async () => {
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), keepBytes: 1 });
    const { id } = await hub.start(request('demo'));
    await lastValueFrom(hub.follow(id));
    expect(await listed(hub, [])).toBe(true);
    await expect(hub.status(id)).rejects.toThrow(ForgottenRunError);
    await hub.close();
  });

  it('serves a finished run byte for byte after a restart on the same dir, and keeps its key', async () => {
    const runs = join(dir, 'runs');
    const first = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs });
    const { id } = await first.start(request('demo'), { idempotencyKey: 'restart-key' });
    const served = await jsonlOf(first, id);
    await first.close();
    const before = await first.status(id);
    const again = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs });
    expect(await jsonlOf(again, id)).toBe(served);
    expect(served.split('\n')).toHaveLength(DEMO_EVENTS + 1);
    expect(await again.status(id)).toEqual(before);
    expect(before.threadId).toBe('demo-thread');
    expect(await again.start(request('demo'), { idempotencyKey: 'restart-key' })).toEqual({ id, created: false });
    expect(spawnsIn(dir)).toHaveLength(1);
    await again.close();
  });

  it('reports a run whose process was killed mid-way as interrupted, with the events it stored', async () => {
    const runs = join(dir, 'runs');
    // The lifeline stops the CLI once its hub is gone.
    const id = await runInKilledHub(dir, runs);
    const diedBy = lastWritten(runs, id);
    // Past it: a hub that took the time it opened for the run's end would say another.
    await eventually(() => Date.now() > diedBy + 5);
    const issues: DecodeIssue[] = [];
    writeFileSync(join(runs, 'not-a-run.json'), '{"status": 1}');
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs, onDiagnostic: (i) => issues.push(i) });
    const status = await hub.status(id);
    expect(status).toMatchObject({ state: 'interrupted', events: 2, error: { name: 'RunInterruptedError' } });
    // It started, and it ended when its hub last wrote anything of it.
    expect(status.startedAt).toMatch(ISO_DATE);
    expect(status.endedAt).toBe(new Date(diedBy).toISOString());
    const read: number[] = [];
    const error = await lastValueFrom(hub.follow(id).pipe(tap(({ index }) => read.push(index)))).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(RunInterruptedError);
    expect(read).toEqual([0, 1]);
    expect(issues.map((i) => i.message)).toEqual([expect.stringContaining('not-a-run.json')]);
    expect(JSON.parse(readFileSync(join(runs, `${id}.json`), 'utf8'))).toMatchObject({
      status: { state: 'interrupted' },
    });
    await hub.close();
  });

  it.each([
    ['a new run', undefined],
    ['a resumed run', 'older-thread'],
  ])(
    "keeps %s completed when its hub is killed between done and the CLI's exit, with the thread it knew",
    async (_, resume) => {
      const runs = join(dir, 'runs');
      const id = await runInKilledHub(dir, runs, 'lingers', ...(resume === undefined ? [] : [resume]));
      const hub = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs });
      const status = await hub.status(id);
      expect(status).toMatchObject({
        state: 'completed',
        events: DEMO_EVENTS,
        startedAt: expect.stringMatching(ISO_DATE),
      });
      // A new run's thread is printed only at the exit that never came; a resumed one's was known from its start.
      expect(status.threadId).toBe(resume);
      expect(status.resumed).toBe(resume);
      expect((await lastValueFrom(hub.follow(id).pipe(toArray()))).at(-1)!.event.type).toBe('done');
      await hub.close();
    },
  );

  it('writes the thread its CLI reports at exit, after done, to the status file', async () => {
    const runs = join(dir, 'runs');
    const options = scenarioRunOptions(dir);
    const hub = await runHub({ runOptions: (r) => ({ ...options(r), lingerMs: 60_000 }), dir: runs });
    const { id } = await hub.start(request('lingers'));
    await lastValueFrom(hub.follow(id));
    const statusFile = () => (JSON.parse(readFileSync(join(runs, `${id}.json`), 'utf8')) as StoredRun).status;
    expect(await eventually(() => statusFile().state === 'completed')).toBe(true);
    expect(statusFile().threadId).toBeUndefined();
    writeFileSync(join(dir, 'exit'), '');
    expect(await eventually(() => statusFile().threadId === 'lingered-thread')).toBe(true);
    expect(await hub.status(id)).toMatchObject({ state: 'completed', threadId: 'lingered-thread' });
    await hub.close();
  });
});
