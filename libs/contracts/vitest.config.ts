import { configDefaults, defineConfig } from 'vitest/config';
import { withoutMissingServers } from '../../vitest.shared.ts';

// Test files that need a Redis or PostgreSQL this machine lacks are skipped, with one line saying so.
const servers = await withoutMissingServers(import.meta.dirname);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...servers.exclude],
    globalSetup: servers.globalSetup,
  },
});
