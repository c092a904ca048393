import { defineConfig } from 'vitest/config';

/** `npm run bench:smoke`: each benchmark once, on small inputs, to show it runs and reports. */
export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 120_000,
    // The JetStream benchmarks' broker, as in vitest.config.ts: the smoke runs need only the nats-server binary.
    globalSetup: ['test/support/suiteBroker.ts'],
    setupFiles: ['test/support/suiteBrokerEnv.ts'],
  },
});
