// A hub's follow that fails, served by the runs handler in a process of its
// own: every kind of error a follow can raise, after a few events, over SSE
// and over JSONL; a directory hub whose events file cannot be read; and an app hook
// that throws. The server stays up through all of it, and tells the app.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunHubError } from '../../src/runs/index.js';
import {
  EVENTS_BEFORE_FAILURE,
  failingId,
  FAILURES,
  prepareFailures,
  type FailureKind,
} from '../support/failingFollowHub.js';
import { readJsonl } from '../support/jsonlClient.js';
import { startRunsServer, type RunsServer, type RunsServerSettings } from '../support/runsServerProcess.js';
import { DEMO_EVENTS } from './scenarios.js';
import { readSse } from './sseClient.js';

const KINDS = Object.keys(FAILURES) as FailureKind[];
const GENERIC = 'the server failed to send the rest of this run';

/** What the `error` event says of a failure: a hub's refusal as it is, anything else by its class alone. */
async function toldOf(kind: FailureKind): Promise<{ name: string; message: string }> {
  const error = await FAILURES[kind]();
  if (error instanceof RunHubError) return { name: error.name, message: error.message };
  return { name: error instanceof Error ? error.name : 'Error', message: GENERIC };
}

function serverIn(settings: Omit<RunsServerSettings, 'dir'>) {
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-failing-'));
  const state = { dir, server: undefined as unknown as RunsServer, url: '' };
  beforeAll(async () => {
    await prepareFailures();
    state.server = await startRunsServer({ ...settings, dir, failing: true });
    state.url = `http://127.0.0.1:${state.server.ready.port}/runs`;
  });
  afterAll(async () => {
    await state.server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return state;
}

async function stillServes(served: { server: RunsServer; url: string }): Promise<void> {
  expect(served.server.alive()).toBe(true);
  expect((await fetch(served.url)).status).toBe(200);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => String(i));

describe('runsHandler over a hub whose follow fails, in a process of its own', () => {
  const served = serverIn({ mount: 'node' });

  it.each(KINDS)('%s after three events: SSE ends with `error`, JSONL is cut off, the app is told', async (kind) => {
    const { server, url } = served;
    const before = server.reported.length;
    const sse = await readSse(`${url}/${failingId(kind)}/events`);
    expect(sse.status).toBe(200);
    expect(sse.frames.map((f) => f.event ?? f.id)).toEqual([...range(EVENTS_BEFORE_FAILURE), 'error']);
    // The reader lacks events of the run: no id, so a reconnection resumes where it was.
    expect(sse.frames.at(-1)!.id).toBeUndefined();
    expect(JSON.parse(sse.frames.at(-1)!.data)).toEqual(await toldOf(kind));
    const jsonl = await readJsonl(`${url}/${failingId(kind)}/events`);
    expect(jsonl.status).toBe(200);
    expect(jsonl.lines).toHaveLength(EVENTS_BEFORE_FAILURE);
    expect(jsonl.error).toBeInstanceOf(Error);
    await server.reports(before + 2);
    expect(server.reported.slice(before)).toHaveLength(2);
    await stillServes(served);
  });

  it('answers 500, saying nothing more, when the hub throws as follow is called; the app is told', async () => {
    const { server, url } = served;
    const before = server.reported.length;
    for (const accept of ['text/event-stream', '*/*']) {
      const answer = await fetch(`${url}/${failingId('throws when called')}/events`, { headers: { accept } });
      expect([answer.status, await answer.json()]).toEqual([500, { error: 'the server failed to answer' }]);
    }
    await server.reports(before + 2);
    expect(server.reported.slice(before)).toEqual(['TypeError: a bug of the hub', 'TypeError: a bug of the hub']);
    await stillServes(served);
  });

  it('serves a run of a directory hub whose events file cannot be read: an I/O error, no path of the server told', async () => {
    const { server, url } = served;
    const removed = `${url}/${server.ready.removed!}/events`;
    const before = server.reported.length;
    const sse = await readSse(removed);
    expect(sse.frames).toEqual([
      { event: 'error', id: undefined, data: JSON.stringify({ name: 'Error', message: GENERIC }) },
    ]);
    // A reader that has every event but the end is given the run's count: its reconnection is answered 204.
    const last = await readSse(removed, { lastEventId: String(DEMO_EVENTS - 1) });
    expect(last.frames.map((f) => [f.event, f.id])).toEqual([['error', String(DEMO_EVENTS)]]);
    expect((await readSse(removed, { lastEventId: String(DEMO_EVENTS) })).status).toBe(204);
    const jsonl = await readJsonl(removed);
    expect([jsonl.lines, jsonl.error]).toEqual([[], expect.any(Error)]);
    await server.reports(before + 3);
    expect(server.reported.slice(before)).toEqual(Array(3).fill(expect.stringMatching(/EISDIR/)));
    await stillServes(served);
  });
});

describe('runsHandler whose onError hook throws, in a process of its own', () => {
  const served = serverIn({ mount: 'node', hook: 'throws' });

  it('answers all the same, and the hook’s failure is a process warning', async () => {
    const { server, url } = served;
    const sse = await readSse(`${url}/${failingId('Error')}/events`);
    expect(sse.frames.at(-1)).toMatchObject({ event: 'error' });
    expect((await readJsonl(`${url}/${failingId('Error')}/events`)).error).toBeInstanceOf(Error);
    const thrown = await fetch(`${url}/${failingId('throws when called')}/events`);
    expect(thrown.status).toBe(500);
    await server.reports(3);
    await server.stderrMatching(/(RunsHandlerWarning: .*onError threw Error: the hook failed too[^]*){3}/);
    await stillServes(served);
  });
});

describe('runsHandler without an onError hook, in a process of its own', () => {
  const served = serverIn({ mount: 'node', hook: 'none' });

  it('tells of a failure as a process warning', async () => {
    const { server, url } = served;
    expect((await readJsonl(`${url}/${failingId('Error')}/events`)).error).toBeInstanceOf(Error);
    await server.stderrMatching(/RunsHandlerWarning: .*Error: something odd in \/srv\/secret\/runs/);
    await stillServes(served);
  });
});
