// The dashboard server's HTTP API, without a browser: what the page relies on.
import { readFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJsonl } from '../../src/index.js';
import type { RunInfo } from '../../examples/web/api.js';
import { transcript } from '../../examples/evosciCommand.js';
import { startDashboardServer, type DashboardServer } from '../../examples/web/server.js';
import { eventually, gone, isAlive } from '../support/processes.js';

describe('the dashboard server', () => {
  let server: DashboardServer;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    server = await startDashboardServer();
  });
  afterAll(async () => {
    const pids = server.runs.list().flatMap((r) => (r.pid === undefined ? [] : [r.pid]));
    await server.close();
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('serves the page and its bundle', async () => {
    const page = await fetch(server.url);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('src="/app.js"');
    expect((await fetch(`${server.url}app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
  });

  it('refuses a bad start request and unknown runs', async () => {
    expect((await call('POST', 'runs', { scenario: 'nope' })).status).toBe(400);
    expect((await call('POST', 'runs', { speed: -1 })).status).toBe(400);
    expect((await call('GET', 'runs/nope')).status).toBe(404);
    expect((await call('DELETE', 'runs/nope')).status).toBe(404);
    expect((await call('PUT', 'runs')).status).toBe(405);
    // A reply resumes only a thread a run reported, by an id that cannot be an option, and says something.
    expect((await call('POST', 'runs', { resume: 'nope1234', prompt: 'go on' })).status).toBe(404);
    expect((await call('POST', 'runs', { resume: '--dangerous', prompt: 'go on' })).status).toBe(400);
    expect((await call('POST', 'runs', { resume: 12, prompt: 'go on' })).status).toBe(400);
    expect((await call('POST', 'runs', { resume: 'nope1234' })).status).toBe(400);
  });

  it('streams a run as JSONL, and replays it from the start to a reader who comes after its end', async () => {
    const { status, body } = await call('POST', 'runs', { scenario: 'needs-input', speed: 20 });
    expect(status).toBe(201);
    const run = body as RunInfo;
    const events = await fetch(`${server.url}runs/${run.id}/events`);
    expect(events.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const live = await lastValueFrom(fromJsonl(events.body!).pipe(toArray()));
    const recorded = await lastValueFrom(fromJsonl(readFileSync(transcript('interrupt-run.jsonl'))).pipe(toArray()));
    expect(live).toEqual(recorded);
    expect(((await call('GET', `runs/${run.id}`)).body as RunInfo).state).toBe('completed');
    const late = await (await fetch(`${server.url}runs/${run.id}/events`)).text();
    expect(await lastValueFrom(fromJsonl(late).pipe(toArray()))).toEqual(recorded);
  });

  it('cancels the stream of a reader that goes away; the run goes on for the others', async () => {
    const run = (await call('POST', 'runs', { scenario: 'slow', speed: 10 })).body as RunInfo;
    const live = server.runs.get(run.id)!;
    const reader = new AbortController();
    const events = await fetch(`${server.url}runs/${run.id}/events`, { signal: reader.signal });
    await events.body!.getReader().read();
    expect(live.log.beingRead).toBe(true);
    reader.abort();
    expect(await eventually(() => !live.log.beingRead)).toBe(true);
    expect(live.info().state).toBe('running');
    await call('DELETE', `runs/${run.id}`);
  });

  it('cancels a run: DELETE answers once its process is gone', async () => {
    const run = (await call('POST', 'runs', { scenario: 'slow', speed: 10 })).body as RunInfo;
    expect(run.pid).toBeTypeOf('number');
    expect(await eventually(() => (server.runs.get(run.id)?.info().events ?? 0) > 0)).toBe(true);
    const { status, body } = await call('DELETE', `runs/${run.id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ state: 'cancelled', exited: true });
    expect(await gone(run.pid!)).toBe(true);
  });
});
