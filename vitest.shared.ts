import { existsSync, globSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresService, redisService } from './test/support/services.ts';

const SHARED_DIR = dirname(fileURLToPath(import.meta.url));

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

/**
 * The contract tests' shared backends (contract-backends.ts), imported by the apps' contract tests too.
 * They need PostgreSQL only: their Redis half drops out by itself when Redis does not answer.
 */
const SHARED_CONTRACT_HELPERS = resolve(SHARED_DIR, 'libs/contracts/test');

/**
 * A unit project's test files that need a live server: those that read `process.env.REDIS_URL` or
 * `process.env.DATABASE_URL`, themselves or through a helper they import from the project's test folder
 * or the shared contract helpers' folder. Read from the files, so a new test needs no list kept by hand.
 */
function filesNeedingServers(projectRoot: string): { redis: string[]; postgres: string[] } {
  const reads = (file: string, seen = new Set<string>()): string => {
    if (seen.has(file) || !existsSync(file)) return '';
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const helpers = [...text.matchAll(/from '(\.\.?\/[^']+\.ts)'/g)]
      .map((match) => resolve(dirname(file), match[1] as string))
      .filter((helper) =>
        [join(projectRoot, 'test'), SHARED_CONTRACT_HELPERS].some((folder) =>
          helper.startsWith(`${folder}/`),
        ),
      );
    return [text, ...helpers.map((helper) => reads(helper, seen))].join('\n');
  };
  const files = globSync('test/**/*.test.ts', { cwd: projectRoot }).sort();
  const needs = (marker: RegExp) => files.filter((file) => marker.test(reads(join(projectRoot, file))));
  return { redis: needs(/process\.env\.REDIS_URL/), postgres: needs(/process\.env\.DATABASE_URL/) };
}

/**
 * What a unit project's vitest config adds so it runs on a machine without Redis or PostgreSQL: with
 * both answering, nothing. Without Redis (REDIS_URL, default 127.0.0.1:6379) the files that need it are
 * excluded (not the contract tests: they run their PostgreSQL cases and say the Redis ones were skipped); without PostgreSQL (DATABASE_URL, default 127.0.0.1:5432) an embedded one is started for the
 * run (test/support/suite-database.setup.ts), or, with no embedded binaries either, its files are
 * excluded. One line says what was skipped or started, and why.
 */
export async function withoutMissingServers(
  projectRoot: string,
): Promise<{ exclude: string[]; globalSetup: string[] }> {
  const needing = filesNeedingServers(projectRoot);
  const project = basename(projectRoot);
  const exclude: string[] = [];
  const globalSetup: string[] = [];
  const said: string[] = [];
  if (needing.redis.length > 0) {
    const redis = await redisService();
    if (!redis.up) {
      exclude.push(...needing.redis);
      said.push(`skipping ${needing.redis.join(', ')}: they need Redis and nothing answers at ${redis.url}`);
    }
  }
  const postgresFiles = needing.postgres.filter((file) => !exclude.includes(file));
  if (postgresFiles.length > 0) {
    const postgres = await postgresService();
    if (!postgres.up) {
      const { embeddedPostgresAvailable } = await import('./test/support/suite-database.ts');
      if (!process.env.DATABASE_URL && (await embeddedPostgresAvailable())) {
        globalSetup.push(resolve(SHARED_DIR, 'test/support/suite-database.setup.ts'));
        said.push(
          `starting an embedded PostgreSQL for ${postgresFiles.length} files: nothing answers at ${postgres.url}`,
        );
      } else {
        exclude.push(...postgresFiles);
        said.push(
          `skipping ${postgresFiles.join(', ')}: they need PostgreSQL and nothing answers at ${postgres.url}`,
        );
      }
    }
  }
  if (said.length > 0) console.log(`${project} tests: ${said.join('; ')}`);
  return { exclude, globalSetup };
}
