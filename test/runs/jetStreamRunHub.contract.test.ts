import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamRunHub } from '../../src/jetstream/index.js';
import { connectBroker, servedWorker, streamsFor, uniquePrefix } from '../jetstream/support.js';
import { describeHubContract } from './hubContract.js';

// The hub across hosts, with a worker in this process taking its requests: each test its own streams.
describeHubContract('jetStreamRunHub', async (_dir, runOptions) => {
  const nc: NatsConnection = await connectBroker();
  const prefix = uniquePrefix('hub');
  const removeStreams = await streamsFor(nc, prefix);
  const worker = servedWorker(nc, { prefix, concurrency: 4, runOptions: (request) => runOptions(request) });
  const hub = jetStreamRunHub(nc, { prefix });
  return {
    hub,
    close: async () => {
      await hub.close();
      worker.stop();
      await removeStreams();
      await nc.close();
    },
  };
});
