import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children on a shared 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
