import { Module } from '@nestjs/common';
import { ApiDocsController } from './api-docs.controller.ts';

@Module({ controllers: [ApiDocsController] })
export class ApiDocsModule {}
