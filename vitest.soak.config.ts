import { defineConfig } from 'vitest/config';

/** `npm run soak`: the fault soak (test/reliability/soak.test.ts, part of `npm test` too) alone, for longer runs or other seeds. */
export default defineConfig({
  test: {
    include: ['test/reliability/soak.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
