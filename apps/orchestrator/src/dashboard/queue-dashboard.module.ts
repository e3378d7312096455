import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Express, NextFunction, Request, Response } from 'express';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { AgentRunQueue } from '../jobs/agent-run-queue.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { basicAuth } from './basic-auth.ts';

export const DASHBOARD_PATH = '/admin/queues';

function readOnly(request: Request, response: Response, next: NextFunction): void {
  if (request.method === 'GET' || request.method === 'HEAD') {
    next();
    return;
  }
  response.setHeader('Allow', 'GET, HEAD');
  response.status(405).json({ statusCode: 405, message: 'the queue dashboard is read-only' });
}

/**
 * bull-board over every server queue and the agent-runs queue, at /admin/queues, behind HTTP Basic auth
 * (DASHBOARD_USERNAME / DASHBOARD_PASSWORD). Without both set, it is not mounted at all, and bull-board's
 * packages are not even loaded (they cost a replica tens of MiB, docs/capacity.md).
 *
 * Read-only: a retry of a completed non-idempotent call would run it again behind the at-most-once
 * marker's back, and raising a queue's global concurrency would break `concurrency: 1`. bull-board
 * refuses its mutating endpoints for a read-only queue (405); anything but GET/HEAD is refused here
 * before bull-board sees it, so an endpoint a later bull-board adds cannot slip through either.
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

  async onModuleInit(): Promise<void> {
    const username = process.env.DASHBOARD_USERNAME;
    const password = process.env.DASHBOARD_PASSWORD;
    if (!username || !password) {
      this.log.info('queue dashboard disabled (set DASHBOARD_USERNAME and DASHBOARD_PASSWORD to enable it)');
      return;
    }
    const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
      import('@bull-board/api'),
      import('@bull-board/api/bullMQAdapter'),
      import('@bull-board/express'),
    ]);
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(DASHBOARD_PATH);
    createBullBoard({
      queues: [
        this.agentRuns.queue,
        ...Object.keys(this.config.servers).map((server) => this.dispatcher.queue(server)),
      ].map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
      serverAdapter,
    });
    const app = this.host.httpAdapter.getInstance<Express>();
    app.use(
      DASHBOARD_PATH,
      basicAuth(username, password, 'switchyard queues'),
      readOnly,
      serverAdapter.getRouter(),
    );
    this.log.info({ path: DASHBOARD_PATH }, 'queue dashboard mounted');
  }
}
