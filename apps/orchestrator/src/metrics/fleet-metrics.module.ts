import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { FleetGauges } from './fleet-gauges.ts';

/** Queue-depth and session gauges; separate from MetricsModule, which everything else depends on. */
@Module({ imports: [CatalogModule, DispatchModule, JobsModule], providers: [FleetGauges] })
export class FleetMetricsModule {}
