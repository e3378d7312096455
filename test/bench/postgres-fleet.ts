import { catalogStoreOf } from '@switchyard/contracts';
import { DATABASE_URL, TEST_BACKEND } from '../support/backend.ts';
import { Deployment } from '../support/deployment.ts';
import { Fleet, listsAll, type ServerEntry } from '../support/fleet.ts';
import type { TestProcess } from '../support/processes.ts';
import { BENCH_PROCESS_ENV, PRODUCTION_WORKER_SETTINGS } from './harness.ts';

/**
 * The bench measures both backends in one process, while the test harness picks one per process
 * (SWITCHYARD_TEST_BACKEND, read once at load). This turns a Fleet or Deployment of the redis pass into
 * one whose processes run on PostgreSQL alone (`SWITCHYARD_BACKEND=postgres`, no Redis variable), with a
 * dispatcher and catalog waits on its queue schema; `close()` drops that schema too. The base class still
 * opens its two (unused) Redis connections in this process; the workers and orchestrators get none.
 */
// biome-ignore lint/suspicious/noExplicitAny: a mixin's constructor must accept any arguments.
type FleetClass = new (...args: any[]) => Fleet;

if (TEST_BACKEND !== 'redis')
  throw new Error(
    'the bench runs its Redis and PostgreSQL paths side by side: leave SWITCHYARD_TEST_BACKEND unset',
  );

export function onPostgres<TBase extends FleetClass>(Base: TBase) {
  class OnPostgres extends Base {
    /** The database of the queue schema; default: the base's (Deployment: its job store's). */
    queueDatabase: string | undefined;

    protected override queuesOnPostgres(): boolean {
      return true;
    }

    protected override queueDatabaseUrl(): string {
      return this.queueDatabase ?? super.queueDatabaseUrl();
    }

    protected override queueStoreConnectionName(): string {
      return 'switchyard-bench-dispatcher';
    }

    override async startWorker(options?: Parameters<Fleet['startWorker']>[0]): Promise<TestProcess> {
      // The schema exists before any process races to make it.
      await this.queueStore();
      return super.startWorker(options);
    }

    /** As Fleet's, read from the queue schema: the base listens for announcements on the pass's store, Redis. */
    protected override async untilListed(servers: string[], timeoutMs: number): Promise<void> {
      const catalog = catalogStoreOf(await this.queueStore());
      const deadline = Date.now() + timeoutMs;
      while (!(await listsAll(catalog, servers))) {
        if (Date.now() > deadline) throw new Error(`catalog entries for ${servers.join(', ')} missing`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      this.catalogReader?.invalidate();
    }

    /** Fleet's close (dispatchers, processes, the pass's Redis keys), then the queue schema. */
    override async close(): Promise<void> {
      await super.close();
      await this.dropQueueSchema();
    }
  }
  return OnPostgres;
}

export const PostgresFleet = onPostgres(Fleet);
export const PostgresDeployment = onPostgres(Deployment);
export type PostgresFleet = InstanceType<typeof PostgresFleet>;

export type Backend = 'redis' | 'postgres';

/** A bench fleet (production worker settings, `info` logs) on `backend`; see harness.benchFleet. */
export function benchFleetOn(
  backend: Backend,
  label: string,
  servers: (dir: string) => Record<string, ServerEntry>,
  databaseUrl = DATABASE_URL,
): Fleet {
  let fleet: Fleet;
  if (backend === 'postgres') {
    const onPg = new PostgresFleet(`${label}-pg`, servers, PRODUCTION_WORKER_SETTINGS);
    onPg.queueDatabase = databaseUrl;
    fleet = onPg;
  } else fleet = new Fleet(label, servers, PRODUCTION_WORKER_SETTINGS);
  Object.assign(fleet.processEnv, BENCH_PROCESS_ENV);
  return fleet;
}
