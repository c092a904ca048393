// The readers of a run over HTTP share its serialised events: a run's
// frames are made once for all of them, and each reader's leave in a few
// large writes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runHub, runsHandler, type RunHub } from '../../src/runs/index.js';
import { fakeEvoSci } from '../../testing/index.js';

const EVENTS = 400;
const lines = [
  ...Array.from({ length: EVENTS - 1 }, (_, i) => JSON.stringify({ type: 'text', content: `delta ${i} `.repeat(8) })),
  '{"type": "done", "content": "", "response": "r"}',
];

describe('a run read by many SSE readers at once', () => {
  let hub: RunHub;
  let server: Server;
  let origin: string;
  let id: string;
  const writes = new Map<string, number>();

  beforeAll(async () => {
    hub = await runHub({ runOptions: fakeEvoSci([{ lines }]) });
    ({ id } = await hub.start({ prompt: 'shared' }));
    // Its end read by a follower: the run has completed.
    await lastValueFrom(hub.follow(id));
    const handler = runsHandler(hub);
    server = createServer((req, res) => {
      const reader = req.headers['x-reader'];
      if (typeof reader === 'string') {
        const write = res.write.bind(res) as (chunk: string) => boolean;
        res.write = ((chunk: string) => (
          writes.set(reader, (writes.get(reader) ?? 0) + 1),
          write(chunk)
        )) as typeof res.write;
      }
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await hub.close();
  });

  it('makes each event’s frame once for them all, and sends each reader its frames in order in a few writes', async () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    const readers = Array.from({ length: 10 }, (_, r) =>
      fetch(`${origin}/runs/${id}/events`, { headers: { accept: 'text/event-stream', 'x-reader': String(r) } }).then(
        (res) => res.text(),
      ),
    );
    const bodies = await Promise.all(readers);
    const serialised = stringify.mock.calls.length;
    stringify.mockRestore();
    for (const body of bodies) {
      const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      // Every event in order, then the end, whose id is the event count.
      expect(ids).toEqual([...Array.from({ length: EVENTS }, (_, i) => i), EVENTS]);
      expect(body).toMatch(/event: end\nid: 400\ndata: \{"state":"completed"\}\n\n$/);
    }
    // One stringify per event, and a few for the ends and the statuses: not one per event per reader.
    expect(serialised).toBeLessThan(EVENTS + 50);
    // Some 120 KB each: a handful of writes, where a write per frame would be 401.
    for (const r of Array.from({ length: 10 }, (_, i) => String(i))) expect(writes.get(r)).toBeLessThan(40);
  });
});
