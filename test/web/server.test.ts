// The dashboard server's HTTP API (the library's runs handler over its hub),
// without a browser: what the page relies on.
import { readFileSync } from 'node:fs';
import { defer, finalize, lastValueFrom, map, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followRun, fromJsonl, type RunStatus } from '../../src/index.js';
import { transcript } from '../../examples/evosciCommand.js';
import { startDashboardServer, type DashboardServer } from '../../examples/web/server.js';
import { eventually, isAlive } from '../support/processes.js';

describe('the dashboard server', () => {
  let server: DashboardServer;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const start = async (metadata: Record<string, string>) => {
    const { status, body } = await call('POST', 'runs', { prompt: 'x', metadata });
    expect(status, JSON.stringify(body)).toBe(201);
    return body['id'] as string;
  };
  const statusOf = async (id: string) => (await call('GET', `runs/${id}`)).body as unknown as RunStatus;

  beforeAll(async () => {
    server = await startDashboardServer();
  });
  afterAll(async () => {
    const pids = [...server.processes.values()];
    await server.close();
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('serves the page and its bundle', async () => {
    const page = await fetch(server.url);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('src="/app.js"');
    expect((await fetch(`${server.url}app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${server.url}nothing`)).status).toBe(404);
  });

  it('refuses a bad start request and unknown runs, and starts nothing', async () => {
    const refused = [
      { prompt: 'x', metadata: { scenario: 'nope' } },
      { prompt: 'x', metadata: { speed: '-1' } },
      { prompt: 'x', metadata: { speed: 2 } },
      { prompt: 'x', metadata: { scenario: 'demo', command: '/bin/sh' } },
      // How a run starts is the server's: a request does not choose auto mode, or where it runs.
      { prompt: 'x', autoMode: true, metadata: { scenario: 'needs-input' } },
      { prompt: 'x', workdir: '/', metadata: { scenario: 'demo' } },
      { scenario: 'demo' },
      // A reply resumes only a thread a run reported, by an id that cannot be an option, and says something.
      { resume: 'nope1234', prompt: 'go on' },
      { resume: '--dangerous', prompt: 'go on' },
      { resume: 12, prompt: 'go on' },
      { resume: 'nope1234' },
    ];
    for (const body of refused) expect((await call('POST', 'runs', body)).status, JSON.stringify(body)).toBe(400);
    expect((await call('GET', 'runs/nope')).status).toBe(404);
    expect((await call('DELETE', 'runs/nope')).status).toBe(404);
    expect((await call('PUT', 'runs')).status).toBe(405);
    expect(await server.hub.list()).toEqual([]);
  });

  it('streams a run as SSE, and replays it whole to a reader who comes after its end, as SSE or JSONL', async () => {
    const id = await start({ scenario: 'needs-input', speed: '20' });
    const events = (url: string) =>
      lastValueFrom(
        followRun(url).pipe(
          map(({ event }) => event),
          toArray(),
        ),
      );
    const live = await events(`${server.url}runs/${id}/events`);
    const recorded = await lastValueFrom(fromJsonl(readFileSync(transcript('interrupt-run.jsonl'))).pipe(toArray()));
    expect(live).toEqual(recorded);
    expect(await statusOf(id)).toMatchObject({
      state: 'completed',
      metadata: { scenario: 'needs-input', speed: '20' },
    });
    expect(await events(`${server.url}runs/${id}/events`)).toEqual(recorded);
    const jsonl = await fetch(`${server.url}runs/${id}/events`);
    expect(jsonl.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(await lastValueFrom(fromJsonl(await jsonl.text()).pipe(toArray()))).toEqual(recorded);
  });

  it('lets go of a reader that goes away; the run goes on for the others', async () => {
    // The readers the handler holds, counted at the hub it serves.
    let readers = 0;
    const { hub } = server;
    const follow = hub.follow.bind(hub);
    Object.assign(hub, {
      follow: (...args: Parameters<typeof follow>) =>
        defer(() => {
          readers++;
          return follow(...args).pipe(finalize(() => readers--));
        }),
    });
    try {
      const id = await start({ scenario: 'slow', speed: '10' });
      const reader = new AbortController();
      const response = await fetch(`${server.url}runs/${id}/events`, { signal: reader.signal });
      await response.body!.getReader().read();
      expect(readers).toBe(1);
      reader.abort();
      expect(await eventually(() => readers === 0)).toBe(true);
      expect((await statusOf(id)).state).toBe('running');
      const first = await lastValueFrom(followRun(`${server.url}runs/${id}/events`).pipe(take(3), toArray()));
      expect(first.map(({ index }) => index)).toEqual([0, 1, 2]);
      await call('DELETE', `runs/${id}`);
    } finally {
      Object.assign(hub, { follow });
    }
  });

  it('cancels a run: DELETE answers once its process is gone', async () => {
    const id = await start({ scenario: 'slow', speed: '10' });
    await expect.poll(async () => (await statusOf(id)).events, { timeout: 30_000 }).toBeGreaterThan(0);
    const pid = server.processes.get(id);
    expect(pid).toBeTypeOf('number');
    const { status, body } = await call('DELETE', `runs/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(isAlive(pid!)).toBe(false);
    expect(server.processes.has(id)).toBe(false);
  });
});
