import { Module } from '@nestjs/common';
import { ApiKeyGuard } from './api-key.guard.ts';
import { TeamsService } from './teams.service.ts';
import { ViewerGuard } from './viewer.guard.ts';
import { WhoamiController } from './whoami.controller.ts';

@Module({
  controllers: [WhoamiController],
  providers: [TeamsService, ApiKeyGuard, ViewerGuard],
  exports: [TeamsService, ApiKeyGuard, ViewerGuard],
})
export class AuthModule {}
