// Who may use the dashboard, over real HTTP: what a foreign page (a simple
// cross-origin POST), a DNS-rebound name (a foreign Host) and a flood of
// starts get, and the token a server beyond loopback asks for.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom } from 'rxjs';
import { startDashboardServer, type DashboardServer } from '../../examples/web/server.js';
import { isAlive } from '../support/processes.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (`fetch` would not let a test set Host). */
function send(url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const SLOW = JSON.stringify({ prompt: 'x', metadata: { scenario: 'slow', speed: '10' } });

async function closeAndCheck(server: DashboardServer): Promise<void> {
  const pids = [...server.processes.values()];
  await server.close();
  expect(pids.filter(isAlive)).toEqual([]);
}

describe('the dashboard on loopback', () => {
  let server: DashboardServer;
  let runs: string;
  beforeAll(async () => {
    server = await startDashboardServer();
    runs = `${server.url}runs`;
  });
  afterAll(() => closeAndCheck(server));

  it('needs no token', () => {
    expect(server.token).toBeUndefined();
    expect(server.pageUrl).toBe(server.url);
  });

  it('refuses a simple cross-origin POST, as a foreign page or form sends it, and starts nothing', async () => {
    const textPlain = await send(runs, 'POST', { origin: 'http://evil.example', 'content-type': 'text/plain' }, SLOW);
    expect(textPlain.status).toBe(403);
    // Without Origin (a client that is not a browser), text/plain is still not a start request.
    const noOrigin = await send(runs, 'POST', { 'content-type': 'text/plain' }, SLOW);
    expect(noOrigin.status).toBe(415);
    const form = await send(runs, 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, 'prompt=x');
    expect(form.status).toBe(415);
    expect((await send(runs, 'POST', { ...JSON_TYPE, origin: 'null' }, SLOW)).status).toBe(403);
    // A reply is a start like any other.
    const reply = JSON.stringify({ resume: 'demo-5b21e0', prompt: 'go on', metadata: { scenario: 'needs-input' } });
    expect((await send(runs, 'POST', { ...JSON_TYPE, origin: 'http://evil.example' }, reply)).status).toBe(403);
    expect((await send(runs, 'POST', { 'content-type': 'text/plain' }, reply)).status).toBe(415);
    expect(await server.hub.list()).toEqual([]);
  });

  it('refuses a foreign Host, to reads as to writes', async () => {
    const port = new URL(server.url).port;
    for (const host of [`evil.example:${port}`, `evil.example:${port}@127.0.0.1`, '127.0.0.1:1']) {
      expect((await send(runs, 'GET', { host })).status, host).toBe(403);
      expect((await send(runs, 'POST', { host, ...JSON_TYPE }, SLOW)).status, host).toBe(403);
    }
    expect((await send(`${server.url}runs/x`, 'DELETE', { host: `evil.example:${port}` })).status).toBe(403);
    expect(await server.hub.list()).toEqual([]);
  });

  it('answers its own page: its address or localhost, with its own Origin', async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const answer = await send(runs, 'GET', { host, origin: `http://${host}` });
      expect(answer.status, host).toBe(200);
    }
    const crossPort = await send(runs, 'GET', { host: `localhost:${port}`, origin: `http://localhost:1` });
    expect(crossPort.status).toBe(403);
  });

  it('runs a handful at once: a flood of 50 starts gets 429 past the cap, with the cap in the message', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 50; i++) answers.push(await send(runs, 'POST', JSON_TYPE, SLOW));
    const started = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    expect(started).toHaveLength(4);
    expect(refused).toHaveLength(46);
    expect(JSON.parse(refused[0]!.body)).toEqual({ error: expect.stringMatching(/\b4\b/) });
    expect(await server.hub.list()).toHaveLength(4);
    // Once one is cancelled (DELETE answers once its process is gone), a start is taken again.
    const first = JSON.parse(started[0]!.body) as { id: string };
    expect((await send(`${server.url}runs/${first.id}`, 'DELETE')).status).toBe(200);
    expect((await send(runs, 'POST', JSON_TYPE, SLOW)).status).toBe(201);
    expect((await send(runs, 'POST', JSON_TYPE, SLOW)).status).toBe(429);
  }, 60_000);
});

describe('the dashboard forgets finished runs', () => {
  it('by count, and by the bytes their events hold; a forgotten run is 410', async () => {
    const byCount = await startDashboardServer({ keepFinished: 2 });
    const byBytes = await startDashboardServer({ keepBytes: 1 });
    try {
      for (const server of [byCount, byBytes]) {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const { id } = await server.hub.start({ prompt: 'x', metadata: { scenario: 'needs-input', speed: '50' } });
          ids.push(id);
          // Read to its end: the follow completes once the run has.
          await lastValueFrom(server.hub.follow(id));
        }
        // A run is forgotten once its process is gone too, which a finished run's status does not say: wait for it.
        const kept = server === byCount ? ids.slice(1) : [];
        await expect.poll(async () => (await server.hub.list()).map((r) => r.id), { timeout: 30_000 }).toEqual(kept);
        expect((await send(`${server.url}runs/${ids[0]}`, 'GET')).status).toBe(410);
      }
    } finally {
      await closeAndCheck(byCount);
      await closeAndCheck(byBytes);
    }
  }, 60_000);
});

describe('the dashboard beyond loopback', () => {
  let server: DashboardServer;
  let local: string;
  beforeAll(async () => {
    server = await startDashboardServer({ host: '0.0.0.0' });
    local = `http://127.0.0.1:${new URL(server.url).port}/`;
  });
  afterAll(() => closeAndCheck(server));

  it('prints a link with its token, and asks every request for it', async () => {
    expect(server.token).toMatch(/^[0-9a-f]{48}$/);
    expect(server.pageUrl).toBe(`${server.url}?token=${server.token}`);
    expect((await send(local, 'GET')).status).toBe(401);
    expect((await send(`${local}runs`, 'GET')).status).toBe(401);
    expect((await send(`${local}runs`, 'POST', JSON_TYPE, SLOW)).status).toBe(401);
    expect((await send(`${local}?token=${'0'.repeat(48)}`, 'GET')).status).toBe(401);
    expect((await send(`${local}runs`, 'GET', { authorization: `Bearer ${'0'.repeat(48)}` })).status).toBe(401);
  });

  it('the link sets a cookie the page sends from then on; a client may send the token as a bearer', async () => {
    const page = await send(`${local}?token=${server.token}`, 'GET');
    expect(page.status).toBe(200);
    const [cookie] = (page.headers['set-cookie'] as string[])[0]!.split(';');
    expect(page.headers['set-cookie']?.[0]).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await send(`${local}runs`, 'GET', { cookie: cookie! })).status).toBe(200);
    expect((await send(`${local}runs`, 'GET', { authorization: `Bearer ${server.token}` })).status).toBe(200);
  });

  it('still refuses a foreign Host with the token', async () => {
    const host = `evil.example:${new URL(server.url).port}`;
    expect((await send(`${local}runs`, 'GET', { host, authorization: `Bearer ${server.token}` })).status).toBe(403);
  });

  it('answers names given to it', async () => {
    const named = await startDashboardServer({ host: '0.0.0.0', allowHosts: ['dash.example.org'] });
    try {
      const port = new URL(named.url).port;
      const bearer = { authorization: `Bearer ${named.token}` };
      const answer = await send(`http://127.0.0.1:${port}/runs`, 'GET', {
        ...bearer,
        host: `dash.example.org:${port}`,
      });
      expect(answer.status).toBe(200);
    } finally {
      await named.close();
    }
  });
});
