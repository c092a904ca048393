// A worker process for the JetStream tests: serves the runs of one prefix,
// playing the fake CLI scenario each request names in `metadata.scenario`,
// and prints its activity as JSON lines.
//
//   node --import tsx test/jetstream/worker.ts <broker> <prefix> [concurrency] [ackWaitMs] [maxAttempts]
//
// <broker> may name several servers of a cluster, separated by commas.
import { connect } from '@nats-io/transport-node';
import { serveRuns } from '../../src/jetstream/index.js';
import { natsUrl } from '../support/natsServer.js';
import { scenarioRun, type Scenario } from './scenarios.js';

const [broker = natsUrl(), prefix = 'evosci', concurrency = '2', ackWaitMs = '2000', maxAttempts = '3'] =
  process.argv.slice(2);
const nc = await connect({ servers: broker.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
const subscription = serveRuns(nc, {
  prefix,
  concurrency: Number(concurrency),
  ackWaitMs: Number(ackWaitMs),
  maxAttempts: Number(maxAttempts),
  worker: `test-worker-${process.pid}`,
  runOptions: (request) =>
    scenarioRun((request.metadata?.['scenario'] ?? 'success') as Scenario, request.metadata?.['tag'] ?? 'untagged', {
      prompt: request.prompt,
    }),
}).subscribe({
  next: (activity) => {
    const { error, ...rest } = activity as { error?: unknown };
    console.log(JSON.stringify({ ...rest, pid: process.pid, ...(error ? { error: (error as Error).name } : {}) }));
  },
  error: (err: unknown) => {
    console.error(`worker failed: ${(err as Error).message}`);
    process.exit(1);
  },
});
process.once('SIGTERM', () => {
  subscription.unsubscribe();
  void nc.drain().finally(() => process.exit(0));
});
console.log(JSON.stringify({ type: 'ready', pid: process.pid }));
