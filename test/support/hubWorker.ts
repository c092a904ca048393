// A `serveRuns` worker process for the hub tests: serves the runs of one
// prefix with the fake CLI scenarios of test/runs/scenarios.ts (each CLI
// recording its start in `dir`, a `gated` run waiting for `dir/go`), and
// prints its activity as JSON lines, as test/jetstream/worker.ts does.
//
//   node --import tsx test/support/hubWorker.ts <broker> <prefix> <dir> <ackWaitMs>
import { connect } from '@nats-io/transport-node';
import { serveRuns } from '../../src/jetstream/index.js';
import { scenarioRunOptions } from '../runs/scenarios.js';

const [broker = '', prefix = '', dir = '', ackWaitMs = ''] = process.argv.slice(2);
const nc = await connect({ servers: broker, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
serveRuns(nc, {
  prefix,
  concurrency: 1,
  ackWaitMs: Number(ackWaitMs),
  worker: `hub-worker-${process.pid}`,
  runOptions: scenarioRunOptions(dir),
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
console.log(JSON.stringify({ type: 'ready', pid: process.pid }));
