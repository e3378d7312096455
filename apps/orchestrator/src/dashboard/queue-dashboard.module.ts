import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Express } from 'express';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { AgentRunQueue } from '../jobs/agent-run-queue.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { basicAuth } from './basic-auth.ts';

export const DASHBOARD_PATH = '/admin/queues';

/**
 * bull-board over every server queue and the agent-runs queue, at /admin/queues, behind HTTP Basic auth
 * (DASHBOARD_USERNAME / DASHBOARD_PASSWORD). Without both set, it is not mounted at all.
 */
@Module({ imports: [DispatchModule, JobsModule] })
export class QueueDashboardModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly host: HttpAdapterHost,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(AgentRunQueue) private readonly agentRuns: AgentRunQueue,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onModuleInit(): void {
    const username = process.env.DASHBOARD_USERNAME;
    const password = process.env.DASHBOARD_PASSWORD;
    if (!username || !password) {
      this.log.info('queue dashboard disabled (set DASHBOARD_USERNAME and DASHBOARD_PASSWORD to enable it)');
      return;
    }
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(DASHBOARD_PATH);
    createBullBoard({
      queues: [
        new BullMQAdapter(this.agentRuns.queue),
        ...Object.keys(this.config.servers).map((server) => new BullMQAdapter(this.dispatcher.queue(server))),
      ],
      serverAdapter,
    });
    const app = this.host.httpAdapter.getInstance<Express>();
    app.use(DASHBOARD_PATH, basicAuth(username, password, 'switchyard queues'), serverAdapter.getRouter());
    this.log.info({ path: DASHBOARD_PATH }, 'queue dashboard mounted');
  }
}
