import { type RedisConnection, redisKeys } from '@switchyard/contracts';

/**
 * Resolves once `check` is true, evaluated now and again on every catalog-changed announcement
 * (workers publish one with each heartbeat): waiting on the fleet's own events, not on a clock.
 */
export async function untilAnnounced(
  redis: RedisConnection,
  prefix: string,
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const subscriber = redis.duplicate();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not within ${timeoutMs} ms: ${what}`)), timeoutMs);
      const evaluate = () =>
        void check().then((done) => {
          if (!done) return;
          clearTimeout(timer);
          resolve();
        }, reject);
      subscriber.on('message', evaluate);
      void subscriber.subscribe(redisKeys.catalogChanged(prefix)).then(evaluate, reject);
    });
  } finally {
    subscriber.disconnect();
  }
}
