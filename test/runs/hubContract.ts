// What every run hub does, whatever keeps its runs: the same suite runs
// against `runHub` (memory and a directory) and `jetStreamRunHub`, and the
// statuses it reads are whole: every field, the same on every hub.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, ExitError } from '../../src/events/errors.js';
import {
  IdempotencyKeyReusedError,
  RunRequestError,
  UnknownRunError,
  type IndexedEvent,
  type RunHub,
  type RunStatus,
} from '../../src/runs/index.js';
import { gone, isAlive, PATIENCE_MS } from '../support/processes.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';

/** A hub under test, its runs started by `scenarioRunOptions(dir)`. */
export interface HubHarness {
  readonly hub: RunHub;
  /** Keeps the runs started from now on from starting (their record held, or no worker taking them) until `release`. */
  hold(): { release(): Promise<void> };
  /**
   * What becomes of a live run whose runner dies: it ends `interrupted`
   * (its hub closed; a directory hub reopened after its process died), or
   * it `runs again` (another worker takes it).
   */
  readonly afterCrash: 'interrupted' | 'runs again';
  /**
   * Its runner dies as a crash kills it, once the run's events so far are
   * stored: resolves with the hub to ask now, and, where the hub can tell,
   * when the run ended.
   */
  crash(id: string): Promise<{ hub: RunHub; endedAt?: string }>;
  close(): Promise<void>;
}

export type OpenHub = (dir: string, runOptions: ReturnType<typeof scenarioRunOptions>) => Promise<HubHarness>;

const indexes = (events: readonly IndexedEvent[]) => events.map((e) => e.index);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const ISO_DATE = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string;

/** Waits until a run's process started a grandchild and wrote its pid. */
async function grandchildPid(dir: string): Promise<number> {
  for (;;) {
    try {
      const pid = Number(readFileSync(join(dir, 'grandchild.pid'), 'utf8'));
      if (pid > 0) return pid;
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The run's status once `sign` holds of it (its last one, if it never does). */
async function statusWhen(hub: RunHub, id: string, sign: (status: RunStatus) => boolean): Promise<RunStatus> {
  const until = Date.now() + PATIENCE_MS;
  let status = await hub.status(id);
  while (!sign(status) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    status = await hub.status(id);
  }
  return status;
}

/** The hub's runs once `sign` holds of them. */
async function listedWhen(hub: RunHub, sign: (runs: readonly RunStatus[]) => boolean): Promise<readonly RunStatus[]> {
  const until = Date.now() + PATIENCE_MS;
  let runs = await hub.list();
  while (!sign(runs) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    runs = await hub.list();
  }
  return runs;
}

/** The status every hub reports of a run of `request(scenario)`, with these fields besides. */
function statusOf(id: string, scenario: string, more: Partial<RunStatus>): RunStatus {
  return {
    id,
    prompt: `a ${scenario} run`,
    metadata: { scenario },
    createdAt: ISO_DATE,
    state: 'running',
    events: 0,
    ...more,
  };
}

export function describeHubContract(name: string, open: OpenHub): void {
  describe(`the run hub contract: ${name}`, () => {
    let dir: string;
    let harness: HubHarness;
    let hub: RunHub;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-'));
      harness = await open(dir, scenarioRunOptions(dir));
      hub = harness.hub;
    });
    afterEach(async () => {
      await harness.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs a started run once, and every reader, early or late, reads it whole and in order', async () => {
      const { id, created } = await hub.start(request('demo'));
      expect(created).toBe(true);
      const early = lastValueFrom(hub.follow(id).pipe(toArray()));
      const events = await early;
      expect(indexes(events)).toEqual(range(0, DEMO_EVENTS));
      expect(events.at(-1)!.event.type).toBe('done');
      const late = await lastValueFrom(hub.follow(id).pipe(toArray()));
      expect(late).toEqual(events);
      // Ended at `done`; the thread comes as the process exits.
      const status = await statusWhen(hub, id, (s) => s.threadId !== undefined);
      expect(status).toEqual(
        statusOf(id, 'demo', {
          state: 'completed',
          events: DEMO_EVENTS,
          startedAt: ISO_DATE,
          endedAt: ISO_DATE,
          threadId: 'demo-thread',
        }),
      );
      expect(spawnsIn(dir)).toHaveLength(1);
    });

    it('gives a reader that names the last event it has the ones after it', async () => {
      const { id } = await hub.start(request('demo'));
      await lastValueFrom(hub.follow(id));
      expect(indexes(await lastValueFrom(hub.follow(id, { after: 4 }).pipe(toArray())))).toEqual(range(5, DEMO_EVENTS));
      expect(await lastValueFrom(hub.follow(id, { after: DEMO_EVENTS + 10 }).pipe(toArray()))).toEqual([]);
      expect(() => hub.follow(id, { after: -2 }).subscribe({ error: () => undefined })).not.toThrow();
      await expect(firstValueFrom(hub.follow(id, { after: 1.5 }))).rejects.toThrow(TypeError);
    });

    it('starts nothing for a repeated idempotency key, and refuses the key with another request', async () => {
      const first = await hub.start(request('demo'), { idempotencyKey: 'key-1' });
      const again = await hub.start(request('demo'), { idempotencyKey: 'key-1' });
      expect(again).toEqual({ id: first.id, created: false });
      await expect(hub.start(request('demo', 'another prompt'), { idempotencyKey: 'key-1' })).rejects.toThrow(
        IdempotencyKeyReusedError,
      );
      await lastValueFrom(hub.follow(first.id));
      expect(await hub.start(request('demo'), { idempotencyKey: 'key-1' })).toEqual({ id: first.id, created: false });
      expect(spawnsIn(dir)).toHaveLength(1);
    });

    it('cancels a live run: its process and its children are gone, and readers end with CancelledError', async () => {
      const { id } = await hub.start(request('slow'));
      const reader = lastValueFrom(hub.follow(id).pipe(toArray())).then(
        () => undefined,
        (err: unknown) => err,
      );
      await firstValueFrom(hub.follow(id, { after: 0 }));
      const child = await grandchildPid(dir);
      const [spawn] = spawnsIn(dir);
      const status = await hub.cancel(id);
      expect(status.state).toBe('cancelled');
      const cancelled = { name: 'CancelledError', message: `run ${id} was cancelled while it ran` };
      expect(status.error).toEqual(cancelled);
      expect(await reader).toEqual(new CancelledError(cancelled.message));
      await expect(lastValueFrom(hub.follow(id))).rejects.toThrow(cancelled.message);
      // The thread it printed as it stopped, stored once its exit reported it.
      expect(await statusWhen(hub, id, (s) => s.threadId !== undefined)).toEqual(
        statusOf(id, 'slow', {
          state: 'cancelled',
          events: 2,
          startedAt: ISO_DATE,
          endedAt: ISO_DATE,
          error: cancelled,
          threadId: 'slow-thread',
        }),
      );
      expect(await gone(spawn!.pid)).toBe(true);
      expect(await gone(child)).toBe(true);
      // Idempotent: the run stays as it ended.
      expect((await hub.cancel(id)).state).toBe('cancelled');
      expect(spawnsIn(dir)).toHaveLength(1);
    });

    it('reports a failed run: readers end with its error, the status says how', async () => {
      const { id } = await hub.start(request('fail'));
      const events: IndexedEvent[] = [];
      const error = await lastValueFrom(hub.follow(id)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ExitError);
      await lastValueFrom(hub.follow(id).pipe(take(2), toArray())).then((got) => events.push(...got));
      expect(indexes(events)).toEqual([0, 1]);
      const status = await hub.status(id);
      expect(status).toEqual(
        statusOf(id, 'fail', {
          state: 'failed',
          events: 2,
          startedAt: ISO_DATE,
          endedAt: ISO_DATE,
          error: { name: 'ExitError', message: (error as ExitError).shortMessage, exitCode: 3 },
        }),
      );
      expect(status.error!.message).toMatch(/ exited with code 3$/);
      // Stderr stays on the server.
      expect(JSON.stringify(status)).not.toContain('ModelError');
    });

    it('cancels a run before it starts: it never starts, and ends cancelled with what was stopped', async () => {
      const held = harness.hold();
      const starting = hub.start(request('demo'));
      const { id } = (await listedWhen(hub, (runs) => runs.length === 1))[0]!;
      const cancelling = hub.cancel(id);
      // Taken: ended at once, or stored, pending, for the worker that takes the run.
      await statusWhen(hub, id, (s) => s.state === 'cancelled' || s.cancelRequestedAt !== undefined);
      await held.release();
      expect(await starting).toEqual({ id, created: true });
      await cancelling;
      await expect(lastValueFrom(hub.follow(id))).rejects.toThrow(`run ${id} was cancelled before it started`);
      expect(await hub.status(id)).toEqual(
        statusOf(id, 'demo', {
          state: 'cancelled',
          endedAt: ISO_DATE,
          error: { name: 'CancelledError', message: `run ${id} was cancelled before it started` },
        }),
      );
      expect(spawnsIn(dir)).toHaveLength(0);
    });

    it('knows the thread of a run that resumes one from its start', async () => {
      const { id } = await hub.start({ ...request('slow'), resume: 'older-thread' });
      await firstValueFrom(hub.follow(id, { after: 0 }));
      expect(await hub.status(id)).toEqual(
        statusOf(id, 'slow', {
          events: 2,
          startedAt: ISO_DATE,
          threadId: 'older-thread',
          resumed: 'older-thread',
        }),
      );
      expect(spawnsIn(dir)[0]!.argv).toEqual(expect.arrayContaining(['--resume=older-thread']));
      await hub.cancel(id);
    });

    it('ends a run whose runner died mid-run interrupted, with what it stored, or runs it again', async () => {
      const { id } = await hub.start(request('gated'));
      await firstValueFrom(hub.follow(id, { after: 0 }));
      const { startedAt } = await hub.status(id);
      const after = await harness.crash(id);
      writeFileSync(join(dir, 'go'), '');
      const status = await statusWhen(after.hub, id, (s) => s.endedAt !== undefined);
      if (harness.afterCrash === 'interrupted') {
        expect(status).toEqual(
          statusOf(id, 'gated', {
            state: 'interrupted',
            events: 2,
            startedAt,
            endedAt: after.endedAt ?? ISO_DATE,
            error: {
              name: 'RunInterruptedError',
              message: expect.stringMatching(`^run ${id} was interrupted: `) as string,
            },
          }),
        );
        expect(spawnsIn(dir)).toHaveLength(1);
      } else {
        expect(status).toEqual(
          statusOf(id, 'gated', { state: 'completed', events: DEMO_EVENTS, startedAt: ISO_DATE, endedAt: ISO_DATE }),
        );
        expect(status.startedAt! > startedAt!).toBe(true);
        expect(spawnsIn(dir)).toHaveLength(2);
      }
    });

    it('refuses unknown ids and bad requests with errors a server maps', async () => {
      await expect(hub.status('no-such-run')).rejects.toThrow(UnknownRunError);
      await expect(hub.cancel('../etc')).rejects.toThrow(UnknownRunError);
      await expect(lastValueFrom(hub.follow('no-such-run'))).rejects.toThrow(UnknownRunError);
      await expect(hub.start({ prompt: '' })).rejects.toThrow(RunRequestError);
      await expect(hub.start({ prompt: 'x', workdir: '/' })).rejects.toThrow(RunRequestError);
      await expect(hub.start({ prompt: 'x', resume: '--help' })).rejects.toThrow(RunRequestError);
      await expect(hub.start({ prompt: 'x', extra: 1 } as never)).rejects.toThrow(RunRequestError);
      await expect(hub.start(request('demo'), { idempotencyKey: 'a b' })).rejects.toThrow(RunRequestError);
      expect(spawnsIn(dir)).toHaveLength(0);
    });

    it('lists its runs, oldest first', async () => {
      const a = await hub.start(request('demo', 'first'));
      await lastValueFrom(hub.follow(a.id));
      const b = await hub.start(request('slow', 'second'));
      await firstValueFrom(hub.follow(b.id));
      const listed = await hub.list();
      expect(listed.map((s) => [s.id, s.state])).toEqual([
        [a.id, 'completed'],
        [b.id, 'running'],
      ]);
      await hub.cancel(b.id);
      expect(isAlive(spawnsIn(dir)[1]!.pid)).toBe(false);
    });
  });
}
