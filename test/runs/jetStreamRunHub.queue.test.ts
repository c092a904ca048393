// `maxQueued` counts the requests the workers' consumer has pending, not the
// messages of the requests stream. After a partition, the copy of the
// requests stream on a server that was cut off can keep requests the
// workers' consumer acknowledged meanwhile, and report them whenever that
// server leads: the stream then counts requests no worker will take. Here,
// on one server, the same shape: a requests stream that keeps what the
// workers' consumer acknowledged (limits retention, as that copy's state
// was), so that its messages are requests no worker will take again.
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { jetStreamRunHub, streamConfigs, submitRun } from '../../src/jetstream/index.js';
import { HubFullError } from '../../src/runs/errors.js';
import { suiteStreams } from '../jetstream/support.js';

const STALE = 18;

describe('jetStreamRunHub maxQueued', () => {
  const { prefix, layout, connection } = suiteStreams('hub-queue');

  it('counts what the workers’ consumer has pending, not requests it is past', async () => {
    const nc = connection();
    const jsm = await jetstreamManager(nc);
    const { requests } = streamConfigs({ prefix, storage: 'memory' });
    await jsm.streams.delete(layout.requestsStream);
    await jsm.streams.add({ ...requests, retention: RetentionPolicy.Limits });
    await jsm.consumers.add(layout.requestsStream, {
      durable_name: layout.workersConsumer,
      ack_policy: AckPolicy.Explicit,
    });
    const consumer = await jetstream(nc).consumers.get(layout.requestsStream, layout.workersConsumer);
    // Requests the workers took and acknowledged, that the stream still holds.
    for (let i = 0; i < STALE; i++) {
      await submitRun(nc, { runId: `stale-${i}`, prompt: 'done long ago' }, { prefix });
      await (await consumer.next({ expires: 5000 }))!.ackAck();
    }
    expect((await jsm.streams.info(layout.requestsStream)).state.messages).toBe(STALE);
    expect((await jsm.consumers.info(layout.requestsStream, layout.workersConsumer)).num_ack_pending).toBe(0);

    const hub = jetStreamRunHub(nc, { prefix, maxQueued: 2 });
    const first = await hub.start({ prompt: 'one' });
    // One taken by a worker and not yet acknowledged still counts.
    const held = await consumer.next({ expires: 5000 });
    expect(held?.headers?.get('EvoSci-Run-Id')).toBe(first.id);
    await hub.start({ prompt: 'two' });
    await expect(hub.start({ prompt: 'three' })).rejects.toBeInstanceOf(HubFullError);
    // Once the worker is done with one, there is room again.
    await held!.ackAck();
    await expect(hub.start({ prompt: 'three' })).resolves.toMatchObject({ created: true });
  }, 60_000);
});
