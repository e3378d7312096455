import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { ApprovalGate } from './approval-gate.ts';
import { ToolCallLifeCycle } from './tool-call-life-cycle.ts';

/**
 * A tool call from admission to settlement, written once for every door (docs/architecture.md §3):
 * agent and batch runs (agent/) and /mcp (gateway/) use it; it uses dispatch/ to reach the fleet.
 */
@Module({
  imports: [AuthModule, CatalogModule, DispatchModule, JobsModule],
  providers: [ApprovalGate, ToolCallLifeCycle],
  exports: [ToolCallLifeCycle],
})
export class ToolCallsModule {}
