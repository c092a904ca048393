// The dashboard server in a process of its own, for the tests that send it
// requests no browser would: a crash is then seen (the process exits)
// rather than taking the test runner down. Prints `{"url": …}` once it listens.
//
//   node --import tsx test/web/dashboardProcess.ts
import { startDashboardServer } from '../../examples/web/server.js';

const server = await startDashboardServer();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
