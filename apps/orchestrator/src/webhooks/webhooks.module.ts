import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { WebhookDeliveries } from './webhook-deliveries.ts';
import { webhookResolverProvider } from './webhook-resolver.ts';
import { WebhooksController } from './webhooks.controller.ts';

/** Signed job webhooks, delivered through the `webhooks` BullMQ queue. */
@Module({
  imports: [AuthModule, JobsModule],
  controllers: [WebhooksController],
  providers: [WebhookDeliveries, webhookResolverProvider],
})
export class WebhooksModule {}
