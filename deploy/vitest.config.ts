import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // `kubectl kustomize` runs once per kustomization; the first model imports are slow-ish.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
