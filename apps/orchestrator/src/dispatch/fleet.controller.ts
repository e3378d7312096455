import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { SwitchyardConfig, WorkerHeartbeat } from '@switchyard/contracts';
import { CurrentViewer, type Viewer, ViewerGuard } from '../auth/viewer.guard.ts';
import { visibleTools } from '../catalog/catalog.controller.ts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import { ModelToolCatalog } from '../catalog/model-tool-catalog.ts';
import { CONFIG } from '../runtime/tokens.ts';
import { FleetTimeouts } from './fleet-timeouts.ts';
import type { ServerList } from './server-list-schema.ts';
import { ToolCallDispatcher } from './tool-call-dispatcher.ts';

/**
 * The fleet as a viewer may see it. An operator gets every server with its sessions (worker ids and
 * last errors, which carry the MCP server's stderr) and queue depths. A team gets only the servers of
 * the tools its filters allow, with session counts by state: no stderr, which may echo another team's
 * arguments, and no queue depths, which show other teams' activity.
 */
@UseGuards(ViewerGuard)
@Controller('v1/servers')
export class FleetController {
  constructor(
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(CatalogReader) private readonly catalog: CatalogReader,
    @Inject(ModelToolCatalog) private readonly tools: ModelToolCatalog,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(FleetTimeouts) private readonly timeouts: FleetTimeouts,
  ) {}

  @Get()
  async list(@CurrentViewer() viewer: Viewer): Promise<ServerList> {
    const [entries, workers, visible] = await Promise.all([
      this.catalog.entries(),
      this.catalog.liveWorkers(),
      visibleTools(this.tools, viewer),
    ]);
    const names =
      viewer.kind === 'operator'
        ? Object.keys(this.config.servers)
        : [...new Set(visible.tools.map((tool) => tool.server))].sort();
    const servers = await Promise.all(
      names.map(async (name) => {
        const server = this.config.servers[name];
        if (!server) throw new Error(`server ${name} is not configured`);
        const common = {
          name,
          transport: server.transport,
          concurrency: server.concurrency,
          availability: await this.catalog.availability(name, server.unavailableAfterMs),
          serverInfo: entries.get(name)?.serverInfo,
          protocolVersions: negotiatedRevisions(workers, name),
        };
        if (viewer.kind === 'team') {
          const tools = visible.tools.filter((tool) => tool.server === name);
          return {
            ...common,
            tools: tools.length,
            timeouts: await this.timeouts.view(
              name,
              tools.map((tool) => tool.tool),
            ),
            sessions: sessionCounts(workers, name),
          };
        }
        const tools = entries.get(name)?.tools.map((tool) => tool.name) ?? [];
        return {
          ...common,
          tools: tools.length,
          timeouts: await this.timeouts.view(name, tools),
          sessions: workers.flatMap((beat) => {
            const status = beat.sessions[name];
            return status
              ? [{ workerId: beat.workerId, ...status, since: new Date(status.since).toISOString() }]
              : [];
          }),
          queue: await this.dispatcher.queueCounts(name),
        };
      }),
    );
    return { servers };
  }
}

function sessionCounts(workers: WorkerHeartbeat[], server: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const beat of workers) {
    const state = beat.sessions[server]?.state;
    if (state) counts[state] = (counts[state] ?? 0) + 1;
  }
  return counts;
}

/** The MCP revisions the live sessions to `server` negotiated (one, unless a server is mid-upgrade). */
function negotiatedRevisions(workers: WorkerHeartbeat[], server: string): string[] {
  const revisions = workers.flatMap((beat) => beat.sessions[server]?.protocolVersion ?? []);
  return [...new Set(revisions)].sort();
}
