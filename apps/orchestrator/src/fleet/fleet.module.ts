import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { FleetGauges } from './fleet-gauges.ts';

/**
 * The fleet as operators watch it: queue-depth and session gauges over every server's queue and the
 * agent-runs queue. It reads jobs, dispatch and catalog; MetricsModule (the registry) depends on nothing.
 */
@Module({ imports: [CatalogModule, DispatchModule, JobsModule], providers: [FleetGauges] })
export class FleetModule {}
