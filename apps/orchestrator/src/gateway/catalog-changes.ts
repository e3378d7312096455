import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { StopListening } from '@switchyard/contracts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { McpEndpoint } from './mcp-endpoint.ts';

/** Workers announce heartbeats (on PostgreSQL only changed ones); the catalog is compared at most this often. */
const CHECK_EVERY_MS = 500;

/**
 * `notifications/tools/list_changed` to MCP clients when the fleet's tool lists change. Workers announce
 * session changes and every heartbeat on the catalog-changed channel; only a change of the published
 * tools (their digest) is a list change. On 2026-07-28 the SDK delivers it on open
 * `subscriptions/listen` streams; 2025-11-25 clients of this stateless endpoint have no stream to
 * receive it on and re-list when they choose (docs/architecture.md, gateway).
 */
@Injectable()
export class CatalogChanges implements OnModuleInit, OnModuleDestroy {
  private stopListening: StopListening | undefined;
  private digest: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Inject(McpEndpoint) private readonly endpoint: McpEndpoint,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.stopListening = await this.reader.onChanged(
      () => this.schedule(),
      (error) => this.log.warn({ err: error }, 'catalog change subscriber error'),
    );
    this.digest = await this.current().catch(() => undefined);
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.timer);
    await this.stopListening?.();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.check().catch((error: unknown) => this.log.warn({ err: error }, 'catalog change check failed'));
    }, CHECK_EVERY_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const digest = await this.current();
    if (digest === this.digest) return;
    const first = this.digest === undefined;
    this.digest = digest;
    if (first) return;
    this.log.info('fleet tool catalog changed: notifying MCP clients');
    this.endpoint.handler.notify.toolsChanged();
  }

  private async current(): Promise<string> {
    this.reader.invalidate();
    const entries = [...(await this.reader.entries()).entries()].sort(([a], [b]) => a.localeCompare(b));
    const hash = createHash('sha256');
    for (const [server, entry] of entries)
      hash.update(server).update('\0').update(JSON.stringify(entry.tools));
    return hash.digest('hex');
  }
}
