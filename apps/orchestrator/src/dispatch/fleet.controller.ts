import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { SwitchyardConfig } from '@switchyard/contracts';
import { ApiKeyGuard } from '../auth/api-key.guard.ts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import { CONFIG } from '../runtime/tokens.ts';
import { ToolCallDispatcher } from './tool-call-dispatcher.ts';

@ApiTags('fleet')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/servers')
export class FleetController {
  constructor(
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(CatalogReader) private readonly catalog: CatalogReader,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
  ) {}

  @Get()
  @ApiOkResponse({ description: 'Every configured MCP server: availability, workers, tools and queue depth' })
  async list() {
    const [entries, workers] = await Promise.all([this.catalog.entries(), this.catalog.liveWorkers()]);
    const servers = await Promise.all(
      Object.entries(this.config.servers).map(async ([name, server]) => {
        const sessions = workers.flatMap((beat) => {
          const status = beat.sessions[name];
          return status ? [{ workerId: beat.workerId, ...status }] : [];
        });
        return {
          name,
          transport: server.transport,
          concurrency: server.concurrency,
          availability: await this.catalog.availability(name, server.unavailableAfterMs),
          tools: entries.get(name)?.tools.length ?? 0,
          serverInfo: entries.get(name)?.serverInfo,
          sessions,
          queue: await this.dispatcher.queueCounts(name),
        };
      }),
    );
    return { servers };
  }
}
