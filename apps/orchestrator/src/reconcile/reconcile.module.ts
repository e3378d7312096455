import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { OpenRuns } from './open-runs.ts';
import { RunReconciler } from './run-reconciler.ts';

/**
 * Rebuilds Redis's share of the state from PostgreSQL, the record (docs/operations.md, Reconciling Redis
 * with PostgreSQL).
 */
@Module({
  imports: [AgentModule, JobsModule],
  providers: [OpenRuns, RunReconciler],
})
export class ReconcileModule {}
