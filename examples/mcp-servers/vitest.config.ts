import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Every test spawns real server processes (node + tsx), so allow for cold starts.
  test: { include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 30_000 },
});
