import { Module } from '@nestjs/common';
import { CallQuotas } from './call-quotas.ts';

/** Per-team quotas enforced fleet-wide through the store, Redis or PostgreSQL (callsPerMinute). */
@Module({
  providers: [CallQuotas],
  exports: [CallQuotas],
})
export class QuotasModule {}
