import { isDependencyOutage } from './dependency-errors.ts';
import type { Logger } from './logger.ts';

/** How long start-up waits for an unreachable PostgreSQL (a restart or failover) before giving up. */
export const STARTUP_DEPENDENCY_WAIT_MS = 120_000;

/**
 * Runs start-up work (migrations, checkpointer set-up) again while PostgreSQL or Redis is unreachable,
 * with backoff, up to `withinMs`: a replica started during a database restart waits for it instead of
 * exiting. Any other failure (a bad migration, bad credentials) is thrown at once.
 */
export async function retryWhileDown<T>(
  what: string,
  work: () => Promise<T>,
  log: Logger,
  withinMs = STARTUP_DEPENDENCY_WAIT_MS,
): Promise<T> {
  const giveUpAt = Date.now() + withinMs;
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await work();
    } catch (error) {
      if (!isDependencyOutage(error) || Date.now() + delayMs > giveUpAt) throw error;
      log.warn({ err: error, retry_in_ms: delayMs }, `${what}: a dependency is unreachable; retrying`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
