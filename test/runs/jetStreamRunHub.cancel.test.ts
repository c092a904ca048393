// A cancel through the hub across hosts answers: at once for a queued run
// when no worker runs, with the cancel shown pending on any hub until a
// worker ends the run; after cancelTimeoutMs for a run whose worker does not
// hear it, with the run still running; and through a link to the broker that
// stops answering for longer than one call waits, once it answers again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/events/errors.js';
import { jetStreamRunHub } from '../../src/jetstream/index.js';
import { cancelRequested } from '../../src/jetstream/read/status.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { BROKER, connectBroker, servedWorker, suiteStreams } from '../jetstream/support.js';
import { request, scenarioRunOptions, spawnsIn } from './scenarios.js';

/** Longer than one broker call waits for its answer (5 s), so that a call made as the link went quiet fails once. */
const OUTAGE_MS = 8000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ISO_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('jetStreamRunHub.cancel', () => {
  const { prefix, layout, connection } = suiteStreams('hub-cancel');
  const cleanups: (() => Promise<void> | void)[] = [];
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hub-cancel-'));
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A connection to the suite's broker through a proxy this test can stall or cut. */
  async function proxied(): Promise<{ proxy: TcpProxy; nc: NatsConnection }> {
    const proxy = await TcpProxy.start(BROKER);
    const nc = await connect({ servers: proxy.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    cleanups.push(
      () => proxy.close(),
      () => nc.close(),
    );
    return { proxy, nc };
  }

  it('answers at once for a queued run while no worker runs, shows the cancel pending on any hub, and a later worker ends the run unrun', async () => {
    const hub = jetStreamRunHub(connection(), { prefix });
    const { id } = await hub.start(request('demo'));
    const pending = await hub.cancel(id);
    expect(pending).toMatchObject({ id, state: 'queued', cancelRequestedAt: expect.stringMatching(ISO_DATE) });
    expect(pending.endedAt).toBeUndefined();
    // Another hub, on a connection of its own, reads the pending cancel from the stream.
    const other = await connectBroker();
    cleanups.push(() => other.close());
    expect(await jetStreamRunHub(other, { prefix }).status(id)).toEqual(pending);

    const worker = servedWorker(connection(), { prefix, runOptions: scenarioRunOptions(dir) });
    cleanups.push(() => worker.stop());
    await expect(lastValueFrom(hub.follow(id))).rejects.toThrow(CancelledError);
    const ended = await hub.status(id);
    expect(ended).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(ended).not.toHaveProperty('cancelRequestedAt');
    expect(await hub.cancel(id)).toEqual(ended);
    expect(spawnsIn(dir)).toEqual([]);
  }, 30_000);

  it('answers with the run still running once cancelTimeoutMs passes unheard, and its worker ends it when it hears', async () => {
    const { proxy, nc } = await proxied();
    const worker = servedWorker(nc, { prefix, runOptions: scenarioRunOptions(dir) });
    cleanups.push(() => worker.stop());
    const hub = jetStreamRunHub(connection(), { prefix, cancelTimeoutMs: 2000 });
    const { id } = await hub.start(request('slow'));
    await firstValueFrom(hub.follow(id));
    // The worker's link goes quiet: the cancel is stored, and no one records the end.
    proxy.stall();
    const pending = await hub.cancel(id);
    expect(pending).toMatchObject({ id, state: 'running', cancelRequestedAt: expect.stringMatching(ISO_DATE) });
    proxy.resume();
    await expect(lastValueFrom(hub.follow(id))).rejects.toThrow(CancelledError);
    const ended = await hub.status(id);
    expect(ended).toMatchObject({ state: 'cancelled', error: { name: 'CancelledError' } });
    expect(ended).not.toHaveProperty('cancelRequestedAt');
  }, 60_000);

  it.each(['stalls', 'is cut and stalls'])(
    'stores a cancel through a link to the broker that %s for longer than a call waits, once it is back',
    async (how) => {
      const { proxy, nc } = await proxied();
      const hub = jetStreamRunHub(nc, { prefix });
      const { id } = await hub.start(request('demo'));
      proxy.stall();
      if (how !== 'stalls') proxy.cut();
      const cancelling = hub.cancel(id);
      await sleep(OUTAGE_MS);
      proxy.resume();
      expect(await cancelling).toMatchObject({
        id,
        state: 'queued',
        cancelRequestedAt: expect.stringMatching(ISO_DATE),
      });
      expect(await cancelRequested(connection(), layout, id)).toBe(true);
    },
    60_000,
  );
});
