import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { closeStore, openStore, redisStore, type Store, type SwitchyardConfig } from '@switchyard/contracts';
import { createLogger } from '@switchyard/telemetry';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthController } from '../src/health/health.controller.ts';
import { DependencyHealth } from '../src/runtime/dependency-health.ts';
import type { OrchestratorEnv } from '../src/runtime/orchestrator-env.ts';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 300;

/**
 * A TCP pass-through to PostgreSQL that can hold what clients send (a database that stopped answering)
 * or swallow everything on the connections open now (a connection stuck for good; new ones pass), and
 * counts the `SELECT 1` probes that reached the database.
 */
class HoldingProxy {
  probes = 0;
  private held = false;
  private readonly waiting: Array<() => void> = [];
  private readonly pairs = new Set<{ client: Socket; upstream: Socket; dead: boolean }>();
  private readonly server: Server;

  private constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
      const pair = { client, upstream, dead: false };
      this.pairs.add(pair);
      client.on('data', (chunk: Buffer) => {
        const forward = () => {
          if (pair.dead) return;
          this.probes += chunk.toString('latin1').split('SELECT 1').length - 1;
          upstream.write(chunk);
        };
        if (this.held) this.waiting.push(forward);
        else forward();
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!pair.dead) client.write(chunk);
      });
      const close = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
  }

  static async start(target: string): Promise<HoldingProxy> {
    const proxy = new HoldingProxy(new URL(target));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  url(base: string): string {
    const url = new URL(base);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    for (const forward of this.waiting.splice(0)) forward();
  }

  /** The connections open now never carry another byte, either way; new connections work. */
  swallowOpenConnections(): void {
    for (const pair of this.pairs) pair.dead = true;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Whether PostgreSQL answers a probe now (not from a recent good answer). */
const answers = (health: DependencyHealth) =>
  health.require(['postgres'], { fresh: true }).then(
    () => true,
    () => false,
  );

describe('DependencyHealth against a PostgreSQL that stops answering', () => {
  let proxy: HoldingProxy;
  let redis: Redis;
  let health: DependencyHealth;

  beforeAll(async () => {
    proxy = await HoldingProxy.start(DATABASE_URL);
    redis = new Redis(REDIS_URL, { lazyConnect: true });
    const log = createLogger('dependency-health-test');
    log.level = 'silent';
    health = new DependencyHealth(
      redisStore(redis, 'sy-test-health'),
      {
        replicaId: 'health-test',
        databaseUrl: proxy.url(DATABASE_URL),
        databaseSchema: 'public',
      } as OrchestratorEnv,
      { orchestrator: { dependencyTimeoutMs: TIMEOUT_MS } } as SwitchyardConfig,
      log,
    );
  });

  afterAll(async () => {
    proxy?.release();
    await health?.onApplicationShutdown();
    redis?.disconnect();
    await proxy?.close();
  });

  it('keeps one probe in flight however many requests ask, so it answers again as soon as PostgreSQL does', async () => {
    await health.require(['postgres']);
    const before = proxy.probes;
    proxy.hold();
    // Clients retrying while the database does not answer: three waves of 30 requests.
    for (let wave = 0; wave < 3; wave++) {
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, () => health.require(['postgres'], { fresh: true })),
      );
      for (const result of results) {
        expect(result.status).toBe('rejected');
        expect(String((result as PromiseRejectedResult).reason.message)).toContain(
          `postgres (postgres did not answer within ${TIMEOUT_MS} ms)`,
        );
      }
    }
    proxy.release();
    await expect.poll(() => answers(health), { timeout: 10_000, interval: 50 }).toBe(true);
    // The probe that was held, and the one that answered after it: not one per request that asked.
    expect(proxy.probes - before).toBeLessThanOrEqual(2);
  });

  it('drops a connection that never answers and probes on a new one', async () => {
    expect(await answers(health)).toBe(true);
    proxy.swallowOpenConnections();
    expect(await answers(health)).toBe(false);
    // The stuck probe fails at its own limit (5 s), its connection is dropped, the next one is new.
    await expect.poll(() => answers(health), { timeout: 15_000, interval: 100 }).toBe(true);
  }, 20_000);
});

/** /health/ready on each backend: what it checks and the `backend` it reports next to them. */
describe('readiness by backend', () => {
  const log = createLogger('dependency-health-test');
  log.level = 'silent';
  const env = {
    replicaId: 'health-test',
    databaseUrl: DATABASE_URL,
    databaseSchema: 'public',
  } as OrchestratorEnv;
  const config = { orchestrator: { dependencyTimeoutMs: 2_000 } } as SwitchyardConfig;
  const opened: Array<{ store: Store; health: DependencyHealth }> = [];

  async function readiness(backend: 'redis' | 'postgres') {
    const store = await openStore({
      choice: { backend, reason: 'test' },
      prefix: `t_health_${Math.random().toString(36).slice(2, 10)}`,
      redis: { url: REDIS_URL },
      databaseUrl: DATABASE_URL,
      connectionName: 'switchyard-health-test',
    });
    const health = new DependencyHealth(store, env, config, log);
    opened.push({ store, health });
    return { store, health, controller: new HealthController(health) };
  }

  afterAll(async () => {
    for (const { store, health } of opened) {
      await health.onApplicationShutdown().catch(() => undefined);
      if (store.kind === 'postgres') await store.pool.query(`DROP SCHEMA IF EXISTS ${store.schema} CASCADE`);
      await closeStore(store);
    }
  });

  it('on redis, checks PostgreSQL and Redis and says so', async () => {
    const { health, controller } = await readiness('redis');
    expect(health.all).toEqual(['postgres', 'redis']);
    expect(await controller.ready()).toEqual({
      status: 'ok',
      backend: 'redis',
      missing: [],
      postgres: 'ok',
      redis: 'ok',
    });
  });

  it('on postgres, checks PostgreSQL only: no redis entry, and nothing asks Redis', async () => {
    const { health, controller } = await readiness('postgres');
    expect(health.all).toEqual(['postgres']);
    expect(await controller.ready()).toEqual({
      status: 'ok',
      backend: 'postgres',
      missing: [],
      postgres: 'ok',
    });
    await health.requireAll({ fresh: true });
    // Redis is no dependency here: asking for it anyway is refused, not probed.
    await expect(health.require(['redis'], { fresh: true })).rejects.toThrow(
      'redis is not a dependency of the postgres backend',
    );
  });
});
