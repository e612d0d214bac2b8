import { defineConfig } from 'vitest/config';

/** `npm run soak`: the long fault soak (test/reliability/soak.soak.ts), apart from `npm test` while it still finds open problems. */
export default defineConfig({
  test: {
    include: ['test/reliability/*.soak.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
