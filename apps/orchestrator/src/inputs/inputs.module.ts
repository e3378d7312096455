import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { InputsController } from './inputs.controller.ts';
import { InputsService } from './inputs.service.ts';

@Module({
  imports: [AuthModule, JobsModule],
  controllers: [InputsController],
  providers: [InputsService],
  // The /mcp gateway records a client's answer to a relayed question the same way (docs/semantics.md §16).
  exports: [InputsService],
})
export class InputsModule {}
