import type { ServerCatalogEntry, WorkerHeartbeat } from '../catalog.ts';
import { notificationChannel } from '../store/postgres/notification-channel.ts';
import { NotificationListener } from '../store/postgres/notification-listener.ts';
import type { PostgresStore } from '../store/store.ts';
import {
  HEARTBEAT_SQL,
  MISSING_TOOLS_SQL,
  PUBLISH_TOOLS_SQL,
  READ_CATALOG_SQL,
  REMOVE_WORKER_SQL,
  RESTORE_TOOLS_SQL,
} from './catalog-sql.ts';
import {
  type CatalogContents,
  type CatalogStore,
  parseCatalogEntry,
  parseHeartbeat,
  type StopListening,
} from './catalog-store.ts';

/**
 * The catalog on PostgreSQL: tables `catalog` and `worker_heartbeat` of the queue schema (through the
 * store's pool, whose search_path is that schema) and the `<schema>_catalog_changed` NOTIFY channel,
 * whose payload is the id of the worker that wrote.
 */
export class PostgresCatalogStore implements CatalogStore {
  private readonly channel: string;

  constructor(private readonly store: Pick<PostgresStore, 'pool' | 'schema' | 'url' | 'applicationName'>) {
    this.channel = notificationChannel(store.schema, 'catalog_changed');
  }

  async publishTools(server: string, entry: ServerCatalogEntry): Promise<void> {
    await this.store.pool.query(PUBLISH_TOOLS_SQL, [server, entry, this.channel, entry.publishedBy]);
  }

  async missingTools(servers: string[]): Promise<string[]> {
    if (servers.length === 0) return [];
    const { rows } = await this.store.pool.query<{ server: string }>(MISSING_TOOLS_SQL, [servers]);
    const missing = new Set(rows.map((row) => row.server));
    return servers.filter((server) => missing.has(server));
  }

  async restoreTools(entries: ServerCatalogEntry[]): Promise<string[]> {
    if (entries.length === 0) return [];
    const { rows } = await this.store.pool.query<{ server: string }>(RESTORE_TOOLS_SQL, [
      JSON.stringify(entries),
      this.channel,
      entries[0]?.publishedBy ?? '',
    ]);
    return rows.map((row) => row.server);
  }

  async heartbeat(record: WorkerHeartbeat): Promise<void> {
    await this.store.pool.query(HEARTBEAT_SQL, [
      record.workerId,
      record,
      record.expiresAt,
      this.channel,
      record.beatAt,
    ]);
  }

  async removeWorker(workerId: string): Promise<void> {
    await this.store.pool.query(REMOVE_WORKER_SQL, [workerId, this.channel]);
  }

  async read(forgetBefore: number): Promise<CatalogContents> {
    const { rows } = await this.store.pool.query<{ kind: 'server' | 'worker'; body: unknown }>(
      READ_CATALOG_SQL,
      [forgetBefore],
    );
    const contents: CatalogContents = { servers: [], workers: [] };
    for (const { kind, body } of rows) {
      if (kind === 'server') {
        const entry = parseCatalogEntry(body);
        if (entry) contents.servers.push(entry);
      } else {
        const beat = parseHeartbeat(body);
        if (beat) contents.workers.push(beat);
      }
    }
    return contents;
  }

  async onChanged(
    listener: (workerId: string) => void,
    onError?: (error: unknown) => void,
  ): Promise<StopListening> {
    const notifications = await NotificationListener.open({
      url: this.store.url,
      applicationName: `${this.store.applicationName}/catalog`,
      channels: { [this.channel]: listener },
      // Changes made while the connection was down were not announced: wake the readers to re-read.
      onReconnected: () => listener(''),
      onError: (error, what) =>
        onError?.(
          new Error(`catalog changes: ${what}: ${(error as Error)?.message ?? String(error)}`, {
            cause: error,
          }),
        ),
    });
    return () => notifications.close();
  }

  /**
   * Nothing to do: the pool reconnects per query, and a database that comes back is the same database
   * (a restore from an older backup is the reconciler's concern, and the beat re-publishes within one
   * interval anyway).
   */
  onReconnect(): () => void {
    return () => undefined;
  }
}
