import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamRunHub } from '../../src/jetstream/index.js';
import type { RunHub } from '../../src/runs/index.js';
import { connectBroker, servedWorker, streamsFor, uniquePrefix } from '../jetstream/support.js';
import { describeHubContract, type HubHarness, type OpenHub } from './hubContract.js';

type Worker = ReturnType<typeof servedWorker>;

/**
 * The hub across hosts, with a worker in this process taking its requests,
 * each test its own streams: `hold` stops the worker (a run stays queued),
 * a crash stops it mid-run and another takes the run again.
 */
class JetStreamHarness implements HubHarness {
  readonly afterCrash = 'runs again';
  private worker: Worker;

  private constructor(
    readonly hub: RunHub,
    private readonly nc: NatsConnection,
    private readonly startWorker: () => Worker,
    private readonly removeStreams: () => Promise<void>,
  ) {
    this.worker = startWorker();
  }

  static async open(...[, runOptions]: Parameters<OpenHub>): Promise<JetStreamHarness> {
    const nc = await connectBroker();
    const prefix = uniquePrefix('hub');
    const removeStreams = await streamsFor(nc, prefix);
    const startWorker = () =>
      servedWorker(nc, { prefix, concurrency: 4, runOptions: (request) => runOptions(request) });
    return new JetStreamHarness(jetStreamRunHub(nc, { prefix }), nc, startWorker, removeStreams);
  }

  hold(): { release(): Promise<void> } {
    this.worker.stop();
    return {
      release: () => {
        this.worker = this.startWorker();
        return Promise.resolve();
      },
    };
  }

  /** Its worker stops as one that died would: the run's CLI with it, its request handed back to the next. */
  crash(): Promise<{ hub: RunHub }> {
    this.worker.stop();
    this.worker = this.startWorker();
    return Promise.resolve({ hub: this.hub });
  }

  async close(): Promise<void> {
    await this.hub.close();
    this.worker.stop();
    await this.removeStreams();
    await this.nc.close();
  }
}

describeHubContract('jetStreamRunHub', (dir, runOptions) => JetStreamHarness.open(dir, runOptions));
