import { defineConfig } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';
import { systemTestSettings } from './vitest.config.ts';

// Set before the test workers exist: every suite (support/backend.ts) and every app it starts sees it.
process.env.SWITCHYARD_TEST_BACKEND = 'postgres';

/**
 * The postgres pass (`npm test -w test` runs it after the Redis passes): the API-level and queue suites
 * again, every worker and orchestrator started with SWITCHYARD_BACKEND=postgres and DATABASE_URL and no
 * Redis variable, the harness's own reads and waits through the queue schema (support/fleet.ts). Left
 * out, each with why: suites that read or write Redis themselves (`fleet.redis`, a Queue on it, a Redis
 * of their own), the Redis fault suites, and suites whose subject does not depend on the queue store.
 */
export default defineConfig({
  ...sourceResolution,
  test: {
    globalSetup: ['support/suite-database.setup.ts'],
    // The fault suite too, with its own PostgreSQL holding the queues (its Redis faults left out, its
    // PostgreSQL restarts hitting the queues as well as the jobs); the sentinel and cluster suites are Redis's.
    include: ['e2e/**/*.test.ts', 'fleet/**/*.test.ts', 'faults/fault-injection.test.ts'],
    exclude: [
      'node_modules/**',
      // A Redis of its own, restarted under the deployment.
      'e2e/run-lock-take-back.test.ts',
      // Redis faults: paused, restarted empty.
      'e2e/redis-paused.test.ts',
      'e2e/redis-restart-empty.test.ts',
      // Restarts the job store's own PostgreSQL; on postgres the queues share it, a different outage (§4) this suite does not assert.
      'e2e/postgres-outages.test.ts',
      // Response headers, body limits and the browser's CSP: the HTTP layer, the same on either store (needs Chromium).
      'e2e/http-hardening.test.ts',
      // The MCP protocol surface of /mcp, which uses the store no differently from mcp-gateway.test.ts.
      'e2e/mcp-gateway-conformance.test.ts',
      // The worker's OAuth client against the suite's scenario servers: its token cache uses the store as
      // team-credentials.test.ts does, which runs here; the discovery and grants do not touch it.
      'e2e/oauth-conformance.test.ts',
      // Read Redis itself: heartbeats, the catalog hash, the outcomes stream, job hashes.
      'fleet/hostile-results.test.ts',
      'fleet/protocol-revisions.test.ts',
      'fleet/worker-http-port.test.ts',
      // Dispatchers and stand-in workers on Redis connections of their own (ACL users, stream writes).
      'fleet/dispatch-faults.test.ts',
      'fleet/lost-notification.test.ts',
      // Counts one Redis server's connections.
      'fleet/connections.test.ts',
      // Redis faults: reconnects, partitions, pauses, a restart that lost every key.
      'fleet/reconnect.test.ts',
      'fleet/redis-partition.test.ts',
      'fleet/redis-pause.test.ts',
      'fleet/redis-restart-empty.test.ts',
      // The worker's MCP sessions (tasks, per-team sessions, a third-party server): the same on either store.
      'fleet/tasks.test.ts',
      'fleet/extension-tasks.test.ts',
      'fleet/team-sessions.test.ts',
      'fleet/third-party-server.test.ts',
    ],
    ...systemTestSettings,
  },
});
