// The runs a directory hub finds when it opens: served from their files,
// with no file held open for them, and a run whose events file is gone
// reported, its readers told that its events are lost.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DecodeIssue } from '../../src/events/errors.js';
import { newRunId } from '../../src/runs/runId.js';
import { runHub, RunHubError } from '../../src/runs/index.js';
import { DEMO_EVENTS, request, scenarioRunOptions } from './scenarios.js';

/** This process's open file descriptors. */
const openFds = () => readdirSync('/proc/self/fd').length;

/**
 * The open descriptors once the file system calls made before now are done:
 * counted after rounds of calls queued behind them on libuv's pool, until
 * two rounds agree.
 */
async function settledFds(paths: readonly string[]): Promise<number> {
  let before = -1;
  for (;;) {
    await Promise.all(paths.map((path) => stat(path)));
    const now = openFds();
    if (now === before) return now;
    before = now;
  }
}

describe('runHub in a directory, opened on runs it stored', () => {
  let dir: string;
  let runs: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-stored-'));
    runs = join(dir, 'runs');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** One demo run stored by a hub that then closed: its id. */
  async function storedRun(): Promise<string> {
    const first = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs });
    const { id } = await first.start(request('demo'));
    await lastValueFrom(first.follow(id));
    await first.close();
    return id;
  }

  it('holds no file open for a run it found: 50 stored runs cost no descriptor', async () => {
    const id = await storedRun();
    // 49 more runs as the hub stores them: the same events and status under other ids.
    const text = readFileSync(join(runs, `${id}.json`), 'utf8');
    for (let i = 0; i < 49; i++) {
      const other = newRunId();
      copyFileSync(join(runs, `${id}.jsonl`), join(runs, `${other}.jsonl`));
      writeFileSync(join(runs, `${other}.json`), text.replaceAll(id, other));
    }
    const files = readdirSync(runs).map((name) => join(runs, name));
    const before = await settledFds(files);
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs, keepFinished: 100 });
    expect(await hub.list()).toHaveLength(50);
    expect((await settledFds(files)) - before).toBeLessThan(5);
    // Each is still served whole, from its file.
    expect(await lastValueFrom(hub.follow(id).pipe(toArray()))).toHaveLength(DEMO_EVENTS);
    await hub.close();
  });

  it('reports a run whose events file is gone, and tells its readers its events are lost', async () => {
    const id = await storedRun();
    rmSync(join(runs, `${id}.jsonl`));
    const issues: DecodeIssue[] = [];
    const hub = await runHub({ runOptions: scenarioRunOptions(dir), dir: runs, onDiagnostic: (i) => issues.push(i) });
    expect(issues.map((i) => i.message)).toEqual([
      `${id}.jsonl is missing from ${runs}: the ${DEMO_EVENTS} events of run ${id} are lost`,
    ]);
    // Its status says what it was; a reader gets no clean end with nothing in it.
    expect(await hub.status(id)).toMatchObject({ state: 'completed', events: DEMO_EVENTS });
    const error = await lastValueFrom(hub.follow(id).pipe(toArray())).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RunHubError);
    expect((error as RunHubError).message).toBe(
      `the ${DEMO_EVENTS} events of run ${id} are lost: the hub's directory no longer has them`,
    );
    expect(existsSync(join(runs, `${id}.jsonl`))).toBe(false);
    await hub.close();
  });
});
