import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/SlowFirstSequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The benchmarks' smoke runs are `npm run bench:smoke` (vitest.bench.config.ts), a step of CI of their own.
    exclude: ['test/bench/**', '**/node_modules/**'],
    // Process tests spawn real children on a shared 2-core machine. Tests wait for signs, not
    // for time; these bounds only stop a test that would otherwise hang.
    testTimeout: 60_000,
    // Most process tests wait on children: three workers keep two cores busy.
    maxWorkers: 3,
    hookTimeout: 60_000,
    // A fresh clone has no timings yet: the longest files still start first.
    sequence: { sequencer: SlowFirstSequencer },
    // One nats-server for the whole run, on a port of its own (or $EVOSCI_RX_NATS): the suite needs only the binary.
    globalSetup: ['test/support/suiteBroker.ts'],
    setupFiles: ['test/support/suiteBrokerEnv.ts'],
  },
});
