import type { Store } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { requestIdKey } from '../src/gateway/request-entry.ts';
import { type RequestRegistry, requestRegistry } from '../src/gateway/request-registry.ts';

const DAY_MS = 24 * 3600 * 1000;

/** What a case needs to see or do to an entry behind the port: its remaining lifetime, its expiry. */
function entries(store: Store) {
  if (store.kind === 'redis') {
    const key = (team: string, requestId: string | number) =>
      `${store.prefix}:mcp-requests:${team}:${requestIdKey(requestId)}`;
    return {
      lifetimeMs: async (team: string, requestId: string | number) => store.redis.pttl(key(team, requestId)),
      /** Its lifetime over: Redis drops a key whose expiry is in the past at once. */
      expire: async (team: string, requestId: string | number) => {
        await store.redis.pexpireat(key(team, requestId), 1);
      },
    };
  }
  const where = 'team = $1 AND request_id = $2';
  return {
    lifetimeMs: async (team: string, requestId: string | number) => {
      const { rows } = await store.pool.query<{ ms: string }>(
        `SELECT expires_at_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms
           FROM mcp_request WHERE ${where}`,
        [team, requestIdKey(requestId)],
      );
      return rows[0] ? Number(rows[0].ms) : -2;
    },
    /** Its lifetime over, the row still there (the sweep has not run): it must read as absent. */
    expire: async (team: string, requestId: string | number) => {
      await store.pool.query(`UPDATE mcp_request SET expires_at_ms = 1 WHERE ${where}`, [
        team,
        requestIdKey(requestId),
      ]);
    },
  };
}

describe.each(contractBackends)('RequestRegistry on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let registry: RequestRegistry;
  let entry: ReturnType<typeof entries>;

  beforeAll(async () => {
    opened = await backend.open();
    registry = requestRegistry(opened.store);
    entry = entries(opened.store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('maps a team’s request id to its job for 24 h, per team and per id type', async () => {
    expect(await registry.jobOf('alpha', 7)).toBeUndefined();
    await registry.register('alpha', 7, 'job-1');
    expect(await registry.jobOf('alpha', 7)).toBe('job-1');
    expect(await registry.jobOf('beta', 7)).toBeUndefined();
    expect(await registry.jobOf('alpha', '7')).toBeUndefined();
    const lifetime = await entry.lifetimeMs('alpha', 7);
    expect(lifetime).toBeGreaterThan(DAY_MS - 60_000);
    expect(lifetime).toBeLessThanOrEqual(DAY_MS);
  });

  it('keeps an entry when the same call registers again, and forgets it when that call releases it', async () => {
    await registry.register('alpha', 'r-1', 'job-2');
    await registry.register('alpha', 'r-1', 'job-2');
    expect(await registry.jobOf('alpha', 'r-1')).toBe('job-2');
    // Another job's release leaves it alone.
    await registry.release('alpha', 'r-1', 'job-other');
    expect(await registry.jobOf('alpha', 'r-1')).toBe('job-2');
    await registry.release('alpha', 'r-1', 'job-2');
    expect(await registry.jobOf('alpha', 'r-1')).toBeUndefined();
    // Free again: the next call with the id is its own.
    await registry.register('alpha', 'r-1', 'job-3');
    expect(await registry.jobOf('alpha', 'r-1')).toBe('job-3');
  });

  it('makes an id two live calls share ambiguous, for neither to release, until it expires', async () => {
    await registry.register('alpha', 'r-2', 'job-4');
    await registry.register('alpha', 'r-2', 'job-5');
    expect(await registry.jobOf('alpha', 'r-2')).toBeUndefined();
    await registry.release('alpha', 'r-2', 'job-4');
    await registry.release('alpha', 'r-2', 'job-5');
    // Still ambiguous: a first call coming back does not make it name one job again.
    await registry.register('alpha', 'r-2', 'job-4');
    expect(await registry.jobOf('alpha', 'r-2')).toBeUndefined();
    expect(await entry.lifetimeMs('alpha', 'r-2')).toBeGreaterThan(DAY_MS - 60_000);
    await entry.expire('alpha', 'r-2');
    await registry.register('alpha', 'r-2', 'job-6');
    expect(await registry.jobOf('alpha', 'r-2')).toBe('job-6');
  });

  it('reads an expired entry as absent, and lets the next call take the id without ambiguity', async () => {
    await registry.register('alpha', 'r-3', 'job-7');
    await entry.expire('alpha', 'r-3');
    expect(await registry.jobOf('alpha', 'r-3')).toBeUndefined();
    await registry.register('alpha', 'r-3', 'job-8');
    expect(await registry.jobOf('alpha', 'r-3')).toBe('job-8');
    expect(await entry.lifetimeMs('alpha', 'r-3')).toBeGreaterThan(DAY_MS - 60_000);
  });

  it('makes the id ambiguous when two replicas register two calls with it at once', async () => {
    const other = requestRegistry(opened?.store as Store);
    await Promise.all([registry.register('alpha', 'r-4', 'job-9'), other.register('alpha', 'r-4', 'job-10')]);
    expect(await registry.jobOf('alpha', 'r-4')).toBeUndefined();
    expect(await other.jobOf('alpha', 'r-4')).toBeUndefined();
  });
});
