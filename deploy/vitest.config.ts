import { defineConfig } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

export default defineConfig({
  ...sourceResolution,
  test: {
    include: ['test/**/*.test.ts'],
    // `kubectl kustomize` runs once per kustomization; the first model imports are slow-ish.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
