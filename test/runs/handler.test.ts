// The runs handler over real HTTP: one POST is one process, whatever the
// readers do; DELETE stops it; every refusal has its status.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, tap } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runHub, runsHandler, type RunHub, type RunHubOptions, type RunsHandlerOptions } from '../../src/runs/index.js';
import { readJsonl } from '../support/jsonlClient.js';
import { gone } from '../support/processes.js';
import { sendRaw } from '../support/rawHttp.js';
import { DEMO, DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';
import { call, readSse } from './sseClient.js';

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i));

interface Served {
  readonly hub: RunHub;
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

async function serve(dir: string, hubOptions: RunHubOptions = {}, options: RunsHandlerOptions = {}): Promise<Served> {
  const hub = await runHub({ runOptions: scenarioRunOptions(dir), ...hubOptions });
  const server: Server = createServer(runsHandler(hub, options));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    hub,
    port,
    url: `http://127.0.0.1:${port}/runs`,
    close: async () => {
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One request with exactly these headers (`fetch` would not let a test set Host); its status and headers. */
function answerTo(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const raw = async (url: string, method: string, headers: Record<string, string>, body?: string) =>
  (await answerTo(url, method, headers, body)).status;

describe('runsHandler', () => {
  let dir: string;
  let served: Served;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-handler-'));
    served = await serve(dir);
  });
  afterEach(async () => {
    await served.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (scenario: Parameters<typeof request>[0], headers: Record<string, string> = {}) => {
    const answer = await call(served.url, 'POST', request(scenario), headers);
    expect(answer.status).toBe(201);
    return answer.body['id'] as string;
  };

  it('runs one process for a POST whose SSE reader drops and reconnects three times, each event once', async () => {
    const id = await start('paced');
    const ids: string[] = [];
    let lastEventId: string | undefined;
    for (let drop = 0; drop < 3; drop++) {
      const read = await readSse(`${served.url}/${id}/events`, { lastEventId, dropAfter: 20 });
      expect(read.dropped).toBe(true);
      ids.push(...read.frames.map((f) => f.id!));
      lastEventId = ids.at(-1);
    }
    const rest = await readSse(`${served.url}/${id}/events`, { lastEventId });
    ids.push(...rest.frames.filter((f) => f.event === undefined).map((f) => f.id!));
    expect(ids).toEqual(range(0, DEMO_EVENTS));
    expect(rest.frames.at(-1)).toMatchObject({ event: 'end', data: '{"state":"completed"}' });
    expect(JSON.parse(rest.frames.at(-2)!.data)).toEqual(
      JSON.parse(readFileSync(DEMO, 'utf8').trim().split('\n').at(-1)!),
    );
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('answers two readers of the same events, and ?after=N, from the one run', async () => {
    const id = await start('paced');
    const [a, b] = await Promise.all([readSse(`${served.url}/${id}/events`), readSse(`${served.url}/${id}/events`)]);
    expect(a.frames).toEqual(b.frames);
    expect(a.frames).toHaveLength(DEMO_EVENTS + 1);
    const after = await readSse(`${served.url}/${id}/events?after=${DEMO_EVENTS - 3}`);
    expect(after.frames.map((f) => f.event ?? f.id)).toEqual([...range(DEMO_EVENTS - 2, DEMO_EVENTS), 'end']);
    const jsonl = await fetch(`${served.url}/${id}/events`).then((r) => r.text());
    expect(jsonl.trim().split('\n')).toHaveLength(DEMO_EVENTS);
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('starts nothing for a repeated POST with the same Idempotency-Key, and refuses the key with another body', async () => {
    const first = await call(served.url, 'POST', request('demo'), { 'idempotency-key': '"k-1"' });
    const again = await call(served.url, 'POST', request('demo'), { 'idempotency-key': '"k-1"' });
    expect(first.status).toBe(201);
    expect(again).toMatchObject({ status: 200, body: { id: first.body['id'] } });
    expect(first.headers.get('location')).toBe(`/runs/${String(first.body['id'])}`);
    const other = await call(served.url, 'POST', request('demo', 'other'), { 'idempotency-key': '"k-1"' });
    expect(other.status).toBe(422);
    await readSse(`${served.url}/${String(first.body['id'])}/events`);
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('cancels a live run on DELETE: its process and its children are gone, and the end event says so', async () => {
    const id = await start('slow');
    const reader = readSse(`${served.url}/${id}/events`);
    const child = await waitForPid(join(dir, 'grandchild.pid'));
    const deleted = await call(`${served.url}/${id}`, 'DELETE');
    expect(deleted).toMatchObject({ status: 200, body: { state: 'cancelled', error: { name: 'CancelledError' } } });
    const { frames } = await reader;
    expect(frames.at(-1)!.event).toBe('end');
    expect(JSON.parse(frames.at(-1)!.data)).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(await gone(spawnsIn(dir)[0]!.pid)).toBe(true);
    expect(await gone(child)).toBe(true);
    expect((await call(`${served.url}/${id}`, 'DELETE')).body).toMatchObject({ state: 'cancelled' });
    expect((await readSse(`${served.url}/${id}/events`)).frames.at(-1)!.event).toBe('end');
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('lists and reports runs, and answers each refusal with its status', async () => {
    const id = await start('demo');
    await readSse(`${served.url}/${id}/events`);
    expect((await call(served.url, 'GET')).body).toMatchObject([{ id, state: 'completed' }]);
    expect((await call(`${served.url}/${id}`, 'GET')).body).toMatchObject({ id, events: DEMO_EVENTS });
    expect((await call(`${served.url}/nope`, 'GET')).status).toBe(404);
    expect((await call(`${served.url}/nope/events`, 'GET')).status).toBe(404);
    expect((await readSse(`${served.url}/${id}/events`, { lastEventId: 'x' })).status).toBe(400);
    expect((await readSse(`${served.url}/${id}/events?after=-1`)).status).toBe(400);
    expect((await call(served.url, 'POST', { prompt: 5 })).status).toBe(400);
    expect((await call(served.url, 'POST', { prompt: 'x', workdir: '/' })).status).toBe(400);
    for (const [path, allowed] of [
      ['', 'GET, HEAD, POST'],
      [`/${id}`, 'GET, HEAD, DELETE'],
      [`/${id}/events`, 'GET, HEAD'],
    ] as const) {
      const put = await fetch(`${served.url}${path}`, { method: 'PUT' });
      expect([put.status, put.headers.get('allow')]).toEqual([405, allowed]);
    }
    const text = await fetch(served.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(text.status).toBe(415);
    const big = await call(served.url, 'POST', { prompt: 'x'.repeat(300 * 1024) });
    expect(big.status).toBe(413);
    expect(spawnsIn(dir)).toHaveLength(1);
  });

  it('answers 429 at maxLive, with Retry-After, and 410 for a forgotten run', async () => {
    await served.close();
    served = await serve(dir, { maxLive: 1 });
    await start('slow');
    const refused = await call(served.url, 'POST', request('demo'));
    expect(refused).toMatchObject({
      status: 429,
      body: { error: expect.stringContaining('at most 1 runs alive at once') },
    });
    expect(refused.headers.get('retry-after')).toBe('10');
    await served.close();
    served = await serve(dir, { keepFinished: 1 });
    const a = await start('demo');
    await readSse(`${served.url}/${a}/events`);
    const b = await start('demo');
    await readSse(`${served.url}/${b}/events`);
    for (let i = 0; i < 200 && (await call(`${served.url}/${a}`, 'GET')).status !== 410; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await call(`${served.url}/${a}`, 'GET')).status).toBe(410);
    expect((await readSse(`${served.url}/${a}/events`)).status).toBe(410);
  });

  it('lets a page of another origin start, read and cancel nothing: no preflight granted, its requests 403', async () => {
    const id = await start('demo');
    const evil = { origin: 'http://evil.example' };
    const preflight = {
      ...evil,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    };
    const own = { origin: `http://127.0.0.1:${served.port}` };
    for (const [url, method, headers, status] of [
      [served.url, 'OPTIONS', preflight, 403],
      [`${served.url}/${id}`, 'OPTIONS', { ...preflight, 'access-control-request-method': 'DELETE' }, 403],
      [served.url, 'OPTIONS', { ...own, 'access-control-request-method': 'POST' }, 405],
      [served.url, 'GET', evil, 403],
      [`${served.url}/${id}/events`, 'GET', { ...evil, accept: 'text/event-stream' }, 403],
      [served.url, 'POST', { ...evil, 'content-type': 'text/plain' }, 403],
      [`${served.url}/${id}`, 'DELETE', evil, 403],
      // An image or a no-cors fetch sends no Origin: it is answered, but nothing lets the page read the answer.
      [served.url, 'GET', {}, 200],
    ] as const) {
      const answer = await answerTo(
        url,
        method,
        headers,
        method === 'POST' ? JSON.stringify(request('demo')) : undefined,
      );
      expect([method, answer.status], url).toEqual([method, status]);
      expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
    expect((await served.hub.list()).map((s) => s.id)).toEqual([id]);
  });

  it('takes requests only for its own Host and Origin, and beyond loopback only with its token', async () => {
    const body = JSON.stringify(request('demo'));
    const json = { 'content-type': 'application/json' };
    expect(await raw(served.url, 'POST', { ...json, host: `evil.example:${served.port}` }, body)).toBe(403);
    const foreign = await sendRaw(served.port, `GET /runs HTTP/1.1\r\nHost: x:5173\r\nConnection: close\r\n\r\n`);
    expect([foreign.status, JSON.parse(foreign.body)]).toEqual([
      403,
      { error: 'this server does not answer to Host "x:5173": add it to allowHosts' },
    ]);
    expect(await raw(served.url, 'POST', { ...json, origin: 'http://evil.example' }, body)).toBe(403);
    expect(await raw(served.url, 'GET', { origin: `http://127.0.0.1:${served.port}` })).toBe(200);
    expect(spawnsIn(dir)).toHaveLength(0);
    await served.close();
    // Beyond loopback (here: as if, by a token the handler asks for), a request without it is refused.
    served = await serve(dir, {}, { token: 'a-token-of-sixteen-or-more' });
    expect((await call(served.url, 'GET')).status).toBe(401);
    expect((await call(served.url, 'GET', undefined, { authorization: 'Bearer wrong-token-of-sixteen' })).status).toBe(
      401,
    );
    expect(
      (await call(served.url, 'GET', undefined, { authorization: 'Bearer a-token-of-sixteen-or-more' })).status,
    ).toBe(200);
  });
});

describe('runsHandler: the end of a run, and what each method answers', () => {
  let dir: string;
  let served: Served;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-handler-end-'));
    served = await serve(dir);
  });
  afterEach(async () => {
    await served.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const finished = async (scenario: Parameters<typeof request>[0]) => {
    const { id } = await served.hub.start(request(scenario));
    await lastValueFrom(served.hub.follow(id)).catch(() => undefined);
    return `${served.url}/${id}/events`;
  };

  it("gives `end` the run's event count as id, and answers 204 to an SSE reader past it once the run has ended", async () => {
    const events = await finished('demo');
    const whole = await readSse(events);
    expect(whole.frames.at(-1)).toEqual({ event: 'end', id: String(DEMO_EVENTS), data: '{"state":"completed"}' });
    // Dropped after the last event, before `end`: the end alone comes again, with its id.
    const last = await readSse(events, { lastEventId: String(DEMO_EVENTS - 1) });
    expect(last.frames).toEqual([{ event: 'end', id: String(DEMO_EVENTS), data: '{"state":"completed"}' }]);
    for (const after of [DEMO_EVENTS, DEMO_EVENTS + 5]) {
      const answer = await fetch(events, { headers: { accept: 'text/event-stream', 'last-event-id': String(after) } });
      expect([answer.status, await answer.text()]).toEqual([204, '']);
      const query = await fetch(`${events}?after=${after}`, { headers: { accept: 'text/event-stream' } });
      expect(query.status).toBe(204);
    }
    // JSONL has no reconnecting client to stop: nothing more, and a body that ends as the run did.
    expect(await readJsonl(`${events}?after=${DEMO_EVENTS}`)).toEqual({ status: 200, lines: [], error: undefined });
    const failed = await finished('fail');
    const ended = await readSse(failed);
    expect(ended.frames.at(-1)).toMatchObject({ event: 'end', id: '2', data: expect.stringContaining('"failed"') });
    expect((await readSse(failed, { lastEventId: '2' })).status).toBe(204);
  });

  it('streams to a reader past the last event of a run still going: it waits for the next', async () => {
    const { id } = await served.hub.start(request('slow'));
    await firstValueFrom(served.hub.follow(id, { after: 0 }));
    const abort = new AbortController();
    const answer = await fetch(`${served.url}/${id}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': '5' },
      signal: abort.signal,
    });
    expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    abort.abort();
  });

  it('ends a JSONL body cleanly only when the run completed, and cuts it off after its lines otherwise', async () => {
    const completed = await readJsonl(await finished('demo'));
    expect([completed.lines.length, completed.error]).toEqual([DEMO_EVENTS, undefined]);
    expect(completed.lines.map((l) => JSON.parse(l) as unknown)).toEqual(
      readFileSync(DEMO, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    );
    const failed = await readJsonl(await finished('fail'));
    expect([failed.lines.length, failed.error]).toEqual([2, expect.any(Error)]);
    const { id } = await served.hub.start(request('slow'));
    await firstValueFrom(served.hub.follow(id, { after: 0 }));
    const reading = readJsonl(`${served.url}/${id}/events`);
    expect((await call(`${served.url}/${id}`, 'DELETE')).body).toMatchObject({ state: 'cancelled' });
    const cancelled = await reading;
    expect([cancelled.lines.length, cancelled.error]).toEqual([2, expect.any(Error)]);
  });

  it('answers DELETE with 202 and the status while the hub has only stored the cancel, 200 once it has ended', async () => {
    const { hub } = served;
    // A hub across hosts stores a cancel for a run no worker has taken yet, and answers at once.
    const pending: RunHub = {
      start: (request, options) => hub.start(request, options),
      follow: (id, options) => hub.follow(id, options),
      status: (id) => hub.status(id),
      list: () => hub.list(),
      cancel: async (id) => ({ ...(await hub.status(id)), state: 'queued' }),
      close: () => hub.close(),
    };
    const server = createServer(runsHandler(pending));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { id } = await served.hub.start(request('demo'));
      const runs = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runs`;
      expect(await call(`${runs}/${id}`, 'DELETE')).toMatchObject({ status: 202, body: { id, state: 'queued' } });
      await lastValueFrom(served.hub.follow(id));
      expect(await call(`${served.url}/${id}`, 'DELETE')).toMatchObject({ status: 200, body: { state: 'completed' } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('follows nothing for a reader that went away while the hub looked its run up', async () => {
    const { hub } = served;
    const { id } = await hub.start(request('slow'));
    let release!: () => void;
    const looked = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => (asked = resolve));
    let following = 0;
    const slowToLook: RunHub = {
      start: (request, options) => hub.start(request, options),
      follow: (runId, options) =>
        hub.follow(runId, options).pipe(tap({ subscribe: () => following++, finalize: () => following-- })),
      status: async (runId) => {
        asked();
        await looked;
        return hub.status(runId);
      },
      list: () => hub.list(),
      cancel: (runId) => hub.cancel(runId),
      close: () => hub.close(),
    };
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const handler = runsHandler(slowToLook);
    const server = createServer((req, res) => {
      res.on('close', closed);
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const abort = new AbortController();
      const port = (server.address() as AddressInfo).port;
      const reading = fetch(`http://127.0.0.1:${port}/runs/${id}/events`, { signal: abort.signal }).catch(() => 0);
      await asking;
      abort.abort();
      await reading;
      await gone;
      release();
      // Every continuation of the lookup runs before the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(following).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers HEAD as GET, without a body, and starts no reader of the events', async () => {
    const events = await finished('demo');
    const head = await fetch(events, { method: 'HEAD', headers: { accept: 'text/event-stream' } });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([
      200,
      'text/event-stream; charset=utf-8',
      '',
    ]);
    const list = await fetch(served.url, { method: 'HEAD' });
    expect([list.status, await list.text()]).toEqual([200, '']);
  });
});

async function waitForPid(file: string): Promise<number> {
  for (let i = 0; i < 1200; i++) {
    try {
      const pid = Number(readFileSync(file, 'utf8'));
      if (pid > 0) return pid;
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${file} was never written`);
}
