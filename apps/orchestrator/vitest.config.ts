import { configDefaults, defineConfig } from 'vitest/config';
import { sourceResolution, withoutMissingServers } from '../../vitest.shared.ts';

// Test files that need a Redis or PostgreSQL this machine lacks are skipped, with one line saying so.
const servers = await withoutMissingServers(import.meta.dirname);

export default defineConfig({
  ...sourceResolution,
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...servers.exclude],
    globalSetup: servers.globalSetup,
    testTimeout: 30_000,
  },
});
