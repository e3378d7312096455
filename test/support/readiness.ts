import { TEST_BACKEND } from './backend.ts';

/**
 * What a healthy orchestrator's /health/ready says on this pass's backend: PostgreSQL and Redis on
 * redis; on postgres the queues live in the job store's database, so PostgreSQL alone and no `redis`
 * entry at all (apps/orchestrator/src/health/health.controller.ts).
 */
export function readyReport(): Record<string, unknown> {
  return TEST_BACKEND === 'postgres'
    ? { status: 'ok', backend: 'postgres', missing: [], postgres: 'ok' }
    : { status: 'ok', backend: 'redis', missing: [], postgres: 'ok', redis: 'ok' };
}
