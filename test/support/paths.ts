import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const WORKER_MAIN = resolve(REPO_ROOT, 'apps/tool-worker/src/main.ts');
export const EXAMPLE_SERVERS = resolve(REPO_ROOT, 'examples/mcp-servers/src');
export const EVERYTHING_SERVER = resolve(
  REPO_ROOT,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

/** `node --import tsx <file>`: how the example servers and the apps run from source. */
export function tsxArgs(file: string, ...rest: string[]): string[] {
  return ['--import', 'tsx', file, ...rest];
}
export const ORCHESTRATOR_MAIN = resolve(REPO_ROOT, 'apps/orchestrator/src/main.ts');
