// The hub across hosts as the README's NATS users run it: a hub with only
// its documented permissions starts, follows, lists and cancels runs that a
// worker user serves; the HTTP handler works over it the same way.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { firstValueFrom, lastValueFrom, toArray, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/events/errors.js';
import { ensureStreams, jetStreamRunHub, serveRuns } from '../../src/jetstream/index.js';
import { runsHandler, type RunHub } from '../../src/runs/index.js';
import { ownBroker, uniquePrefix, type OwnBroker } from '../jetstream/support.js';
import { brokerUsers } from '../jetstream/users.js';
import { DEMO_EVENTS, request, scenarioRunOptions, spawnsIn } from './scenarios.js';
import { call, readSse } from './sseClient.js';

describe('jetStreamRunHub with the documented NATS users', () => {
  const prefix = uniquePrefix('hub-users');
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-users-'));
  let broker: OwnBroker;
  let worker: NatsConnection;
  let hubUser: NatsConnection;
  let serving: Subscription;
  let hub: RunHub;
  let server: Server;
  let runs: string;

  beforeAll(async () => {
    broker = await ownBroker({ config: brokerUsers(prefix), credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    worker = await connect({ servers: broker.url, user: 'worker', pass: 'worker-secret' });
    hubUser = await connect({ servers: broker.url, user: 'hub', pass: 'hub-secret' });
    await ensureStreams(worker, { prefix, storage: 'memory' });
    serving = serveRuns(worker, { prefix, concurrency: 2, runOptions: scenarioRunOptions(dir) }).subscribe();
    hub = jetStreamRunHub(hubUser, { prefix });
    server = createServer(runsHandler(hub));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    runs = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runs`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    server?.close();
    serving?.unsubscribe();
    await hubUser?.close();
    await worker?.close();
    await broker?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts once per key, serves the events over SSE, lists, and cancels a live run on the worker', async () => {
    const first = await call(runs, 'POST', request('demo'), { 'idempotency-key': 'users-1' });
    const again = await call(runs, 'POST', request('demo'), { 'idempotency-key': 'users-1' });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body['id']).toBe(first.body['id']);
    const { frames } = await readSse(`${runs}/${String(first.body['id'])}/events`);
    expect(frames.map((f) => f.event ?? f.id)).toEqual([
      ...Array.from({ length: DEMO_EVENTS }, (_, i) => String(i)),
      'end',
    ]);
    const slow = await hub.start(request('slow'));
    const reading = lastValueFrom(hub.follow(slow.id).pipe(toArray())).catch((err: unknown) => err);
    await firstValueFrom(hub.follow(slow.id, { after: 0 }));
    const listed = await call(runs, 'GET');
    expect((listed.body as unknown as { id: string }[]).map((s) => s.id)).toEqual([first.body['id'], slow.id]);
    const cancelled = await call(`${runs}/${slow.id}`, 'DELETE');
    expect(cancelled.body).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(await reading).toBeInstanceOf(CancelledError);
    expect(spawnsIn(dir)).toHaveLength(2);
  });
});
