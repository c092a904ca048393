// What every run hub does, whatever keeps its runs: the same suite runs
// against `runHub` (memory and a directory) and `jetStreamRunHub`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
} from '../../src/runs/index.js';
import { gone, isAlive } from '../support/processes.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';

/** A hub under test, its runs started by `scenarioRunOptions(dir)`. */
export interface HubHarness {
  readonly hub: RunHub;
  close(): Promise<void>;
}

export type OpenHub = (dir: string, runOptions: ReturnType<typeof scenarioRunOptions>) => Promise<HubHarness>;

const indexes = (events: readonly IndexedEvent[]) => events.map((e) => e.index);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

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
      const status = await hub.status(id);
      expect(status).toMatchObject({ id, state: 'completed', events: DEMO_EVENTS, prompt: 'a demo run' });
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
      expect(status.error?.name).toBe('CancelledError');
      expect(await reader).toBeInstanceOf(CancelledError);
      await expect(lastValueFrom(hub.follow(id))).rejects.toThrow(CancelledError);
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
      expect(status.state).toBe('failed');
      expect(status.error).toMatchObject({ name: 'ExitError', exitCode: 3 });
      // Stderr stays on the server.
      expect(JSON.stringify(status)).not.toContain('ModelError');
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
