// A worker holding a long run while the workers' consumer loses its leader,
// on a three-server cluster: the leader is killed (SIGKILL) and restarted,
// three times. A worker whose confirmations go unanswered during the
// election tries again until the new leader hears it, and reports each
// unanswered try; the request never goes to the idle worker beside it, and
// the CLI starts once.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRun, ensureStreams, layoutOf, submitRun } from '../../../src/jetstream/index.js';
import { NatsCluster } from '../../support/natsCluster.js';
import { eventually } from '../../support/processes.js';
import { hangFiles } from '../scenarios.js';
import { uniquePrefix } from '../support.js';
import { startWorker, stopWorkers, type WorkerProcess } from '../workers.js';
import { until } from './readersSupport.js';

/** The workers' ack wait: a confirmation every 2 s; an election of a few seconds passes several. */
const ACK_WAIT_MS = 6000;
/** After a new leader is elected: the ack wait, and seconds of margin, for a redelivery to show if one comes. */
const WATCH_MS = ACK_WAIT_MS + 4000;
const KILLS = 3;

/** Each start of the fake CLI that the `hang` scenario logged. */
function startsIn(file: string): unknown[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

describe('a worker whose consumer loses its leader while it runs', () => {
  const prefix = uniquePrefix('wpi');
  const layout = layoutOf({ prefix });
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-wpi-'));
  const workers: WorkerProcess[] = [];
  let cluster: NatsCluster;
  let nc: NatsConnection;

  /** The workers' consumer as one running server reports it; `undefined` while none can. */
  const consumerInfo = async (): Promise<ConsumerInfo | undefined> => {
    for (const node of cluster.nodes.filter((n) => n.running)) {
      const client = await connect({ servers: node.url, reconnect: false, timeout: 2000 }).catch(() => undefined);
      if (!client) continue;
      try {
        const jsm = await jetstreamManager(client, { timeout: 2000 });
        return await jsm.consumers.info(layout.requestsStream, layout.workersConsumer);
      } catch {
        // No leader yet, or this server is behind: ask another.
      } finally {
        await client.close();
      }
    }
    return undefined;
  };

  /** The consumer's leader, once it has one other than `old`. */
  const leaderOtherThan = (old?: string) =>
    until(async () => {
      const leader = (await consumerInfo())?.cluster?.leader;
      return leader && leader !== old ? leader : undefined;
    });

  /** Resolves once the consumer has a leader and both other replicas are current. */
  const allCurrent = () =>
    until(async () => {
      const replicas = (await consumerInfo())?.cluster?.replicas ?? [];
      return replicas.length === 2 && replicas.every((r) => r.current) ? true : undefined;
    });

  beforeAll(async () => {
    cluster = await NatsCluster.start();
    nc = await cluster.connect();
    await ensureStreams(nc, { prefix, replicas: 3 });
  }, 90_000);

  afterAll(async () => {
    await stopWorkers(workers);
    await nc?.close();
    await cluster?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its run through three kills of the leader: no attempt 2, and the unanswered tries reported', async () => {
    const files = hangFiles(dir);
    const brokers = cluster.urls.join(',');
    const holder = startWorker(brokers, prefix, { concurrency: 1, ackWaitMs: ACK_WAIT_MS });
    workers.push(holder);
    await holder.ready;
    const runId = await submitRun(
      nc,
      { prompt: `hang [${dir}]`, metadata: { scenario: 'hang', tag: dir } },
      { prefix },
    );
    expect(await eventually(() => startsIn(files.starts).length === 1)).toBe(true);
    // An idle worker beside it, that takes the request if the holder's hold lapses.
    const idle = startWorker(brokers, prefix, { concurrency: 1, ackWaitMs: ACK_WAIT_MS });
    workers.push(idle);
    await idle.ready;
    await allCurrent();

    const secondAttempt = () =>
      startsIn(files.starts).length > 1 || [holder, idle].some((w) => w.activity.some((a) => a['attempt'] === 2));
    for (let kill = 0; kill < KILLS; kill++) {
      const leader = await leaderOtherThan();
      const index = cluster.indexOf(leader);
      await cluster.nodes[index]!.stop('SIGKILL');
      await leaderOtherThan(leader);
      // Long enough for the new leader to deliver the request again if it had not heard of the holder.
      await eventually(secondAttempt, WATCH_MS);
      await cluster.restart(index);
      await allCurrent();
    }

    const summary = JSON.stringify({ holder: holder.activity, idle: idle.activity });
    expect(startsIn(files.starts), summary).toHaveLength(1);
    expect(secondAttempt(), summary).toBe(false);
    expect(
      holder.activity.filter((a) => a['type'] === 'superseded' || a['type'] === 'returned'),
      summary,
    ).toEqual([]);
    expect(
      idle.activity.filter((a) => a['runId'] === runId),
      summary,
    ).toEqual([]);
    // The holder said its confirmations went unanswered, and kept trying.
    const unconfirmed = holder.activity.filter((a) => a['type'] === 'unconfirmed');
    expect(unconfirmed.length, summary).toBeGreaterThan(0);
    expect(unconfirmed[0]).toMatchObject({ runId, attempt: 1, unconfirmedForMs: expect.any(Number) });
    console.log(
      `${KILLS} kills of the consumer's leader: ${startsIn(files.starts).length} CLI start(s), ${unconfirmed.length} unanswered confirmations, longest unconfirmed ${Math.max(...unconfirmed.map((a) => a['unconfirmedForMs'] as number))} ms`,
    );

    // Cancelled, the run ends on its holder, attempt 1.
    expect(await cancelRun(nc, runId, { prefix })).toMatchObject({ result: 'cancelled-running' });
  }, 240_000);
});
