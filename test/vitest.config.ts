import { defineConfig } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

export default defineConfig({
  ...sourceResolution,
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'bench/**'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Suites spawn real worker and MCP server processes; on 2 cores they run one file at a time.
    fileParallelism: false,
  },
});
