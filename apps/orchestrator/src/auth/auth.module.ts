import { Module } from '@nestjs/common';
import { ApiKeyGuard } from './api-key.guard.ts';
import { TeamsService } from './teams.service.ts';

@Module({ providers: [TeamsService, ApiKeyGuard], exports: [TeamsService, ApiKeyGuard] })
export class AuthModule {}
