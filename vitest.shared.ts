/**
 * Tests run the TypeScript sources: workspace packages resolve through their "@switchyard/source" export
 * condition (compiled consumers get "default", i.e. dist/). Vite replaces its default conditions when
 * given a list, so they are restated after ours (vite's DEFAULT_SERVER_CONDITIONS).
 */
const conditions = ['@switchyard/source', 'node', 'development|production'];

export const sourceResolution = {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
};
