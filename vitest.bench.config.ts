import { defineConfig } from 'vitest/config';

/** `npm run bench:smoke`: each benchmark once, on small inputs, to show it runs and reports. */
export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
