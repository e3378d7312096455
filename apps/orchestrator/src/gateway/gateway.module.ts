import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { InputsModule } from '../inputs/inputs.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { STORE } from '../runtime/tokens.ts';
import { ToolCallsModule } from '../tool-calls/tool-calls.module.ts';
import { CatalogChanges } from './catalog-changes.ts';
import { GatewayCalls } from './gateway-calls.ts';
import { GatewayJobs } from './gateway-jobs.ts';
import { GatewayTasks } from './gateway-tasks.ts';
import { LogLevels, logLevels } from './log-levels.ts';
import { McpEndpoint } from './mcp-endpoint.ts';
import { McpGatewayController } from './mcp-gateway.controller.ts';
import { OrphanedCalls } from './orphaned-calls.ts';
import { RequestRegistry, requestRegistry } from './request-registry.ts';

/** The fleet as one MCP endpoint, `/mcp` (docs/architecture.md, gateway). */
@Module({
  imports: [AuthModule, CatalogModule, DispatchModule, InputsModule, JobsModule, ToolCallsModule],
  controllers: [McpGatewayController],
  providers: [
    GatewayCalls,
    GatewayJobs,
    GatewayTasks,
    McpEndpoint,
    { provide: RequestRegistry, inject: [STORE], useFactory: requestRegistry },
    { provide: LogLevels, inject: [STORE], useFactory: logLevels },
    CatalogChanges,
    OrphanedCalls,
  ],
})
export class GatewayModule {}
