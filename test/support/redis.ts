import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ prefix no other run shares, so parallel or leftover runs never see each other's jobs. */
export function uniquePrefix(label: string): string {
  return `sy-test-${label}-${randomUUID().slice(0, 8)}`;
}

export function connect(name = 'switchyard-test'): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null, connectionName: name });
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
