import { defineConfig } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

/** Shared by this config and vitest.cluster.config.ts. */
export const systemTestSettings = {
  testTimeout: 120_000,
  // Hooks wait for the processes' own log lines; this only bounds a failure. Starting a deployment
  // took over 60 s on a 2-core machine whose cores were busy (npm test beside two busy loops).
  hookTimeout: 180_000,
  // Suites spawn real worker and MCP server processes; on 2 cores they run one file at a time.
  fileParallelism: false,
};

export default defineConfig({
  ...sourceResolution,
  test: {
    // DATABASE_URL, else the machine's PostgreSQL, else an embedded one for the run.
    globalSetup: ['support/suite-database.setup.ts'],
    include: ['**/*.test.ts'],
    // cluster/: only the cluster run (vitest.cluster.config.ts) has a cluster to run them on.
    exclude: ['node_modules/**', 'bench/**', 'cluster/**'],
    ...systemTestSettings,
  },
});
