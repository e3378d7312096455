import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  type McpHttpHandler,
  type McpRequestContext,
  McpServer,
  type Tool,
} from '@modelcontextprotocol/server';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { type Team, TeamsService } from '../auth/teams.service.ts';
import type { ModelTool } from '../catalog/model-tool-catalog.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { GatewayCalls } from './gateway-calls.ts';
import { declaresTasks, GatewayTasks, TASKS_CAPABILITY } from './gateway-tasks.ts';

const SERVER_INFO = { name: 'switchyard', version: '0.1.0' };

/** A catalog tool as MCP's tools/list shows it: the server's own schema, annotations and execution. */
function toMcpTool(tool: ModelTool): Tool {
  const { definition } = tool;
  // `execution` (task support) is passed through when the worker's catalog carries it.
  const execution = (definition as { execution?: Tool['execution'] }).execution;
  return {
    name: tool.name,
    ...(definition.title ? { title: definition.title } : {}),
    description: tool.description,
    inputSchema: { type: 'object', ...definition.inputSchema } as Tool['inputSchema'],
    ...(definition.outputSchema ? { outputSchema: definition.outputSchema as Tool['outputSchema'] } : {}),
    ...(definition.annotations ? { annotations: definition.annotations } : {}),
    ...(execution ? { execution } : {}),
  };
}

/**
 * The MCP side of /mcp: a stateless handler from the v2 server SDK serving 2026-07-28 (per-request
 * envelope) and 2025-11-25 (stateless fallback) from one per-request server built for the caller's team.
 * Stateless, so any replica answers any request; the team comes from the bearer key the controller checked.
 * On 2026-07-28 it also speaks the tasks extension (gateway-tasks.ts) for calls that declare it.
 */
@Injectable()
export class McpEndpoint implements OnModuleDestroy {
  readonly handler: McpHttpHandler;
  readonly node: ReturnType<typeof toNodeHandler>;

  constructor(
    @Inject(GatewayCalls) private readonly calls: GatewayCalls,
    @Inject(GatewayTasks) private readonly tasks: GatewayTasks,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    const onerror = (error: Error) => this.log.warn({ err: error }, 'MCP gateway request failed');
    this.handler = createMcpHandler((ctx) => this.serverFor(ctx), { onerror });
    this.node = toNodeHandler(this.handler, { onerror });
  }

  async onModuleDestroy(): Promise<void> {
    await this.handler.close();
  }

  private serverFor(ctx: McpRequestContext): McpServer {
    const team = ctx.authInfo ? this.teams.byName(ctx.authInfo.clientId) : undefined;
    const modern = ctx.era === 'modern';
    const mcp = new McpServer(SERVER_INFO, {
      // The tasks extension exists on 2026-07-28 only; 2025-11-25 clients see no task support at all.
      // `logging`: the tools' own log messages are relayed during a call (gateway-calls.ts); on
      // 2025-11-25 it also installs the SDK's logging/setLevel, which answers {} (call-log-level.ts).
      capabilities: {
        tools: { listChanged: true },
        logging: {},
        ...(modern ? { extensions: TASKS_CAPABILITY } : {}),
      },
      instructions:
        "Switchyard: the tools of a fleet of MCP servers, named <server>__<tool>. Each call runs as a job on its server's queue; a failed call says whether the tool ran.",
    });
    const server = mcp.server;
    server.setRequestHandler('tools/list', async () => ({
      tools: team ? (await this.calls.tools(team)).map(toMcpTool) : [],
    }));
    server.setRequestHandler('tools/call', async (request, context) => {
      // A 2026-07-28 call that declares the tasks extension gets a task at once (gateway-tasks.ts);
      // every other call holds its request until the outcome, with progress while it waits.
      if (modern && declaresTasks(context)) {
        return this.tasks.create(requireTeam(team), request.params, context, '2026-07-28');
      }
      return this.calls.call(requireTeam(team), request.params, context, modern ? '2026-07-28' : undefined);
    });
    if (modern && team) this.tasks.register(server, team);
    // 2025-11-25: the SDK's own setLevel keeps the level in this one request's server; it is kept per
    // team and key instead, for the calls that follow (log-levels.ts). 2026-07-28 has no setLevel.
    const token = ctx.authInfo?.token;
    if (!modern && team && token) {
      server.setRequestHandler('logging/setLevel', async (request) => {
        await this.calls.setLogLevel(team, token, request.params.level);
        return {};
      });
    }
    return mcp;
  }
}

function requireTeam(team: Team | undefined): Team {
  // The controller authenticates every request before it reaches the handler.
  if (!team) throw new Error('MCP request without an authenticated team');
  return team;
}
