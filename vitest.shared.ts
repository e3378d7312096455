/**
 * Tests run the TypeScript sources: workspace packages resolve through their "@switchyard/source" export
 * condition (compiled consumers get "default", i.e. dist/). Vite replaces its default conditions when
 * given a list, so they are restated after ours (vite's DEFAULT_SERVER_CONDITIONS) — except "module":
 * that condition picks bundler-only builds (e.g. @opentelemetry/api 1.9's build/esm, extensionless
 * imports) which Node then fails to load when vitest externalizes the dependency.
 */
const conditions = ['@switchyard/source', 'node', 'development|production'];

export const sourceResolution = {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
};
