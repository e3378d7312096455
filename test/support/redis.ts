import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ prefix no other run shares, so parallel or leftover runs never see each other's jobs. */
export function uniquePrefix(label: string): string {
  return `sy-test-${label}-${randomUUID().slice(0, 8)}`;
}

export function connect(name = 'switchyard-test', url = REDIS_URL): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, connectionName: name });
  // Tests that restart Redis expect reconnects; ioredis retries on its own.
  redis.on('error', () => undefined);
  return redis;
}

/** Deletes every key of a test prefix. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}
