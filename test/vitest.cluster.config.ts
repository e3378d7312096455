import { defineConfig } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';
import { systemTestSettings } from './vitest.config.ts';

/**
 * The fleet, dispatcher and e2e suites again, against a local 3-primary Redis Cluster that
 * support/redis-cluster.setup.ts starts for the run (`npm run test:cluster -w test`, part of
 * `npm test`): every key the apps and BullMQ touch together must share a hash slot. Left out: suites
 * about a Redis of their own (paused, restarted) or counting one server's connections.
 */
export default defineConfig({
  ...sourceResolution,
  test: {
    globalSetup: ['support/suite-database.setup.ts', 'support/redis-cluster.setup.ts'],
    include: ['cluster/**/*.test.ts', 'fleet/**/*.test.ts', 'e2e/**/*.test.ts'],
    exclude: [
      'node_modules/**',
      'fleet/redis-pause.test.ts',
      'fleet/connections.test.ts',
      'e2e/redis-paused.test.ts',
      'e2e/postgres-outages.test.ts',
      // The local stores of `npm run demo` / `npm run dev` (an embedded PostgreSQL, a Redis of their own).
      'e2e/local-stores.test.ts',
      'e2e/dev-command.test.ts',
      // The browser drives the same API; what it shows does not depend on the Redis topology.
      'e2e/console.test.ts',
      'e2e/console-people.test.ts',
      // The MCP protocol surface of /mcp, which uses Redis no differently from mcp-gateway.test.ts.
      'e2e/mcp-gateway-conformance.test.ts',
      // The worker's OAuth client against the suite's scenario servers: its token cache uses Redis as
      // team-credentials.test.ts does, which runs here; the discovery and grants do not touch it.
      'e2e/oauth-conformance.test.ts',
    ],
    ...systemTestSettings,
  },
});
