// What a hub forgot stays forgotten: a forgotten run's id answers 410 and
// its key starts nothing, after a restart on the same directory too, within
// a bound of memory and of disk.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DecodeIssue } from '../../src/events/errors.js';
import { FORGOTTEN_FILE, ForgottenLog } from '../../src/runs/ForgottenLog.js';
import { ForgottenRuns } from '../../src/runs/ForgottenRuns.js';
import {
  ForgottenRunError,
  IdempotencyKeyReusedError,
  runHub,
  UnknownRunError,
  type RunHubOptions,
} from '../../src/runs/index.js';
import { checkStartRequest, fingerprintOf } from '../../src/runs/policy.js';
import { request, scenarioRunOptions, spawnsIn } from './scenarios.js';

const fingerprint = (prompt: string) => fingerprintOf(checkStartRequest(request('demo', prompt)));
const lineOf = (run: object) => `${JSON.stringify(run)}\n`;

describe('runHub in a directory, after a restart', () => {
  let dir: string;
  let runs: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-forgotten-'));
    runs = join(dir, 'runs');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = (options: RunHubOptions = {}) => runHub({ runOptions: scenarioRunOptions(dir), dir: runs, ...options });

  it("keeps a forgotten run's key: a retry names the run and starts nothing, another request with it is 422", async () => {
    const first = await open({ keepFinished: 1 });
    const old = await first.start(request('demo', 'run 0'), { idempotencyKey: 'k0' });
    await lastValueFrom(first.follow(old.id));
    const next = await first.start(request('demo', 'run 1'));
    await lastValueFrom(first.follow(next.id));
    await first.close();
    // Forgotten once both had ended, and its files gone by the time the hub closed.
    await expect(first.status(old.id)).rejects.toThrow(ForgottenRunError);
    expect(existsSync(join(runs, `${old.id}.json`))).toBe(false);

    const again = await open();
    expect(await again.start(request('demo', 'run 0'), { idempotencyKey: 'k0' })).toEqual({
      id: old.id,
      created: false,
    });
    await expect(again.status(old.id)).rejects.toThrow(ForgottenRunError);
    await expect(lastValueFrom(again.follow(old.id))).rejects.toThrow(ForgottenRunError);
    await expect(again.start(request('demo', 'another prompt'), { idempotencyKey: 'k0' })).rejects.toThrow(
      IdempotencyKeyReusedError,
    );
    expect(spawnsIn(dir)).toHaveLength(2);
    await again.close();
  });

  it('finishes forgetting a run whose files a crash left after it was recorded as forgotten', async () => {
    const first = await open();
    const { id } = await first.start(request('demo', 'run 0'), { idempotencyKey: 'k0' });
    await lastValueFrom(first.follow(id));
    await first.close();
    // As the hub writes it before it removes the files: the process died between the two.
    appendFileSync(join(runs, FORGOTTEN_FILE), lineOf({ id, idempotencyKey: 'k0', fingerprint: fingerprint('run 0') }));

    const again = await open();
    expect(await again.list()).toEqual([]);
    await expect(again.status(id)).rejects.toThrow(ForgottenRunError);
    expect(existsSync(join(runs, `${id}.json`))).toBe(false);
    expect(existsSync(join(runs, `${id}.jsonl`))).toBe(false);
    expect(await again.start(request('demo', 'run 0'), { idempotencyKey: 'k0' })).toEqual({ id, created: false });
    expect(spawnsIn(dir)).toHaveLength(1);
    await again.close();
  });

  it('reports a line of the forgotten runs that it cannot read, skips it, and opens all the same', async () => {
    mkdirSync(runs);
    const good = lineOf({ id: 'gone-1', idempotencyKey: 'k1', fingerprint: fingerprint('run 1') });
    const lines = [good, 'not json\n', lineOf({ id: '../etc' }), lineOf({ id: 'gone-3', idempotencyKey: 'a b' })];
    // The last line cut off by a crash.
    writeFileSync(join(runs, FORGOTTEN_FILE), `${lines.join('')}{"id": "gone-2", "idempo`);
    const issues: DecodeIssue[] = [];
    const hub = await open({ onDiagnostic: (issue) => issues.push(issue) });
    expect(issues.map((issue) => [issue.line, issue.message])).toEqual(
      [2, 3, 4, 5].map((line) => [line, expect.stringContaining(`${FORGOTTEN_FILE} in ${runs}: line ${line}`)]),
    );
    await expect(hub.status('gone-1')).rejects.toThrow(ForgottenRunError);
    await expect(hub.status('gone-2')).rejects.toThrow(UnknownRunError);
    await expect(hub.status('gone-3')).rejects.toThrow(UnknownRunError);
    expect(await hub.start(request('demo', 'run 1'), { idempotencyKey: 'k1' })).toEqual({
      id: 'gone-1',
      created: false,
    });
    // Rewritten without them: the next line appended starts a line of its own.
    expect(readFileSync(join(runs, FORGOTTEN_FILE), 'utf8')).toBe(good);
    expect(spawnsIn(dir)).toHaveLength(0);
    await hub.close();
  });
});

describe('ForgottenLog', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-forgotten-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the latest runs, and never more than twice as many lines as it keeps', async () => {
    const issues: DecodeIssue[] = [];
    const log = new ForgottenLog(dir, 3, (issue) => issues.push(issue));
    expect(await log.read()).toEqual([]);
    const lineCounts: number[] = [];
    for (let i = 0; i < 10; i++) {
      await log.append({ id: `run-${i % 8}`, idempotencyKey: `key-${i}` });
      lineCounts.push(readFileSync(join(dir, FORGOTTEN_FILE), 'utf8').split('\n').length - 1);
    }
    expect(Math.max(...lineCounts)).toBeLessThanOrEqual(6);
    // Read again, as a hub that opens: the latest three, a run forgotten twice by its latest line.
    expect(await new ForgottenLog(dir, 3, (issue) => issues.push(issue)).read()).toEqual([
      { id: 'run-7', idempotencyKey: 'key-7' },
      { id: 'run-0', idempotencyKey: 'key-8' },
      { id: 'run-1', idempotencyKey: 'key-9' },
    ]);
    expect(readFileSync(join(dir, FORGOTTEN_FILE), 'utf8').split('\n')).toHaveLength(4);
    expect(issues).toEqual([]);
  });
});

describe('ForgottenRuns', () => {
  it('remembers the latest runs by id and by key, and lets the oldest go', () => {
    const forgotten = new ForgottenRuns(2);
    forgotten.add({ id: 'a', idempotencyKey: 'ka' });
    forgotten.add({ id: 'b' });
    forgotten.add({ id: 'c', idempotencyKey: 'kc' });
    expect([forgotten.has('a'), forgotten.has('b'), forgotten.has('c')]).toEqual([false, true, true]);
    expect(forgotten.withKey('ka')).toBeUndefined();
    expect(forgotten.withKey('kc')).toEqual({ id: 'c', idempotencyKey: 'kc' });
  });
});
