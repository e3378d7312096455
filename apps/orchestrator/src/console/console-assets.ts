import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where Vite wrote the console (apps/orchestrator/dist/console-ui). The same relative path holds from
 * src/console/ under tsx and from dist/console/ when compiled, so both run modes serve one build.
 */
export const CONSOLE_ASSETS_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'dist',
  'console-ui',
);

export function consoleIsBuilt(dir = CONSOLE_ASSETS_DIR): boolean {
  return existsSync(join(dir, 'index.html'));
}

/**
 * Vite names every file under assets/ by its content hash, so a browser may keep it for good; the
 * page itself must be revalidated so that a new deployment's page (naming new assets) is seen at once.
 */
export function consoleCacheControl(path: string): string {
  return /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache';
}
