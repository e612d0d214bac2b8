import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Decides once whether the Docker sandbox tests can run (see test/sandbox/docker-setup.ts).
    globalSetup: ['test/sandbox/docker-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
