import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const EVERYTHING_SERVER = resolve(
  REPO_ROOT,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

/**
 * How the suites start the apps and the example servers: from the TypeScript sources under tsx (the
 * default), or, with SWITCHYARD_COMPILED=1, the compiled JavaScript of `npm run build` (`node dist/….js`),
 * as the images and `npm run orchestrator` / `npm run worker` run them.
 */
export type RunMode = 'source' | 'compiled';
export const RUN_MODE: RunMode = process.env.SWITCHYARD_COMPILED === '1' ? 'compiled' : 'source';

/** The file that runs `name` of a project (apps/…, examples/mcp-servers) in the given mode. */
export function entryPoint(project: string, name: string, mode: RunMode = RUN_MODE): string {
  return mode === 'compiled'
    ? resolve(REPO_ROOT, project, 'dist', `${name}.js`)
    : resolve(REPO_ROOT, project, 'src', `${name}.ts`);
}

export const WORKER_MAIN = entryPoint('apps/tool-worker', 'main');
export const ORCHESTRATOR_MAIN = entryPoint('apps/orchestrator', 'main');

/** One of examples/mcp-servers (search, notes, slow, recorder, crashy, hostile). */
export function exampleServerPath(name: string, mode: RunMode = RUN_MODE): string {
  return entryPoint('examples/mcp-servers', name, mode);
}

/**
 * Node arguments that run `file`: compiled JavaScript as is; TypeScript through tsx, with workspace
 * packages resolved to their sources (the "@switchyard/source" export condition; default is dist/).
 */
export function tsxArgs(file: string, ...rest: string[]): string[] {
  if (file.endsWith('.js')) return [file, ...rest];
  return ['--conditions=@switchyard/source', '--import', 'tsx', file, ...rest];
}
