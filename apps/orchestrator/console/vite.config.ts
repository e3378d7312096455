import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

/**
 * The web console: this folder is the Vite root; `npm run build -w apps/orchestrator` writes it to
 * dist/console-ui (next to, not inside, dist/console where tsc puts the NestJS module that serves it).
 * `base` is where the orchestrator serves it, so asset URLs resolve under /console/.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  // Workspace libraries (@switchyard/client) are bundled from their TypeScript sources, as the apps
  // resolve them under tsx: the console needs no build of them first.
  resolve: { conditions: ['@switchyard/source', ...defaultClientConditions] },
  build: {
    outDir: fileURLToPath(new URL('../dist/console-ui', import.meta.url)),
    emptyOutDir: true,
  },
  // `vite --config console/vite.config.ts` for development: the API answers on the orchestrator.
  server: {
    proxy: { '/v1': process.env.SWITCHYARD_API_URL ?? 'http://127.0.0.1:3000' },
  },
});
