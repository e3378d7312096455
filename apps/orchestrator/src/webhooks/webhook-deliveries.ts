import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { bullmqBinding, type Store, type SwitchyardConfig } from '@switchyard/contracts';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { TeamsService } from '../auth/teams.service.ts';
import { parseAllowList } from '../egress/address-policy.ts';
import type { EgressPolicy, ResolveHost } from '../egress/webhook-target-check.ts';
import { JobEvents, type JobEventType } from '../jobs/job-events.ts';
import { type JobRecord, JobStore } from '../jobs/job-store.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, STORE } from '../runtime/tokens.ts';
import {
  deliveryId,
  WEBHOOKS_QUEUE,
  type WebhookDeliveryData,
  type WebhookDeliveryJob,
  type WebhookDeliveryProgress,
} from './webhook-delivery.ts';
import { type WebhookDeliveryView, webhookDeliveryView } from './webhook-delivery-view.ts';
import { webhookPayload } from './webhook-payload.ts';
import { WEBHOOK_RESOLVER } from './webhook-resolver.ts';
import { sendWebhook } from './webhook-sender.ts';
import { signingSecret, webhookEventOf, webhookTargets } from './webhook-targets.ts';

const DAY_SECONDS = 24 * 3600;

/**
 * Webhooks of jobs (docs/operations.md): when a replica publishes a job's status, each receiver that
 * asked for that event gets a delivery on the `webhooks` BullMQ queue, which every replica consumes.
 * BullMQ retries a failed attempt with exponential backoff; each attempt's answer is kept on the
 * delivery (its progress) for GET /v1/jobs/:id/webhooks.
 */
@Injectable()
export class WebhookDeliveries implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly queue: Queue<WebhookDeliveryData>;
  private worker: Worker<WebhookDeliveryData> | undefined;
  private readonly settings: SwitchyardConfig['orchestrator']['webhooks'];
  private readonly egress: EgressPolicy;

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(STORE) private readonly queueStore: Store,
    @Inject(CONFIG) config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(WEBHOOK_RESOLVER) resolve: ResolveHost,
  ) {
    this.settings = config.orchestrator.webhooks;
    this.egress = { allow: parseAllowList(this.settings.allowPrivateNetworks), resolve };
    const binding = bullmqBinding(queueStore);
    this.queue = new Queue<WebhookDeliveryData>(WEBHOOKS_QUEUE, binding.options, binding.factory as never);
    this.queue.on('error', (error) => this.log.warn({ err: error }, 'webhooks queue error'));
  }

  onModuleInit(): void {
    this.events.onPublished((jobId, type, data) => this.onJobEvent(jobId, type, data));
  }

  /** Deliveries are sent only once the whole app is up, like agent runs. */
  onApplicationBootstrap(): void {
    const binding = bullmqBinding(this.queueStore);
    this.worker = new Worker<WebhookDeliveryData>(
      WEBHOOKS_QUEUE,
      (job) => this.deliver(job),
      { ...binding.options, name: this.env.replicaId, concurrency: this.settings.concurrency },
      binding.factory as never,
    );
    this.worker.on('error', (error) => this.log.error({ err: error }, 'webhooks worker error'));
    // Logged from BullMQ's events, which fire once the delivery's new state is stored: a reader of the
    // log line (or of GET /v1/jobs/:id/webhooks right after it) sees that state.
    this.worker.on('completed', (job) => {
      const progress = job.progress as Partial<WebhookDeliveryProgress>;
      this.deliveryLog(job).info(
        { attempt: progress.attempts, status_code: progress.lastStatusCode },
        'webhook delivered',
      );
    });
    this.worker.on('failed', (job, error) => {
      if (!job) return;
      const progress = (
        typeof job.progress === 'object' ? job.progress : {}
      ) as Partial<WebhookDeliveryProgress>;
      this.deliveryLog(job).warn(
        {
          attempt: progress.attempts,
          status_code: progress.lastStatusCode,
          error: progress.lastError ?? error.message,
        },
        progress.nextAttemptAt ? 'webhook attempt failed (retrying)' : 'webhook attempt failed (failed)',
      );
    });
  }

  /** Only the receiver's origin is logged: a URL's path or query may carry a receiver's token. */
  private deliveryLog(job: WebhookDeliveryJob): Logger {
    const { jobId, team, event, target, url } = job.data;
    return this.log.child({ job_id: jobId, team, event, target, receiver: new URL(url).origin });
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }

  /** Every delivery of a job so far, one per receiver and event. */
  async deliveries(job: JobRecord): Promise<WebhookDeliveryView[]> {
    const targets = webhookTargets(job.request, this.teams.byName(job.team)?.config);
    const ids = targets.flatMap((target) =>
      target.events.map((event) => deliveryId(job.id, event, target.target)),
    );
    const found = await Promise.all(
      ids.map(async (id) => {
        const delivery = (await this.queue.getJob(id)) as WebhookDeliveryJob | undefined;
        if (!delivery) return undefined;
        return webhookDeliveryView(delivery, await delivery.getState());
      }),
    );
    return found.filter((view): view is WebhookDeliveryView => view !== undefined);
  }

  private async onJobEvent(jobId: string, type: JobEventType, data: Record<string, unknown>) {
    const event = type === 'status' ? webhookEventOf(data.status) : undefined;
    if (!event) return;
    const job = await this.store.get(jobId);
    if (!job) return;
    const receivers = webhookTargets(job.request, this.teams.byName(job.team)?.config).filter((target) =>
      target.events.includes(event),
    );
    if (receivers.length === 0) return;
    const payload = webhookPayload(event, job, new Date());
    for (const receiver of receivers) {
      await this.queue.add(
        event,
        { jobId, team: job.team, event, target: receiver.target, url: receiver.url, payload },
        {
          jobId: deliveryId(jobId, event, receiver.target),
          attempts: this.settings.attempts,
          backoff: { type: 'exponential', delay: this.settings.backoffMs },
          removeOnComplete: { age: 7 * DAY_SECONDS },
          removeOnFail: { age: 30 * DAY_SECONDS },
        },
      );
    }
    this.log.info({ job_id: jobId, team: job.team, event, receivers: receivers.length }, 'webhooks queued');
  }

  private async deliver(job: WebhookDeliveryJob): Promise<{ statusCode?: number }> {
    const { jobId, team, event, target, url, payload } = job.data;
    const secret = signingSecret(target, this.teams.byName(team)?.config);
    if (!secret) {
      this.metrics.webhookDelivery(team, event, 'failed');
      this.deliveryLog(job).error('webhook dropped: the config no longer has a secret for this receiver');
      throw new UnrecoverableError(`no signing secret for webhook ${target} of team ${team} any more`);
    }
    const attempt = job.attemptsMade + 1;
    const lastAttemptAt = new Date().toISOString();
    const result = await sendWebhook(
      { id: job.id ?? '', url, payload, secret },
      { timeoutMs: this.settings.timeoutMs, egress: this.egress },
    );
    // A refused literal address or name is refused again: the delivery fails at once. A name that
    // resolved inside the deployment may resolve elsewhere later, so it is retried like any failure.
    const retries = !result.ok && !result.final && attempt < this.settings.attempts;
    const progress: WebhookDeliveryProgress = {
      attempts: attempt,
      lastAttemptAt,
      ...(result.statusCode !== undefined ? { lastStatusCode: result.statusCode } : {}),
      ...(result.error ? { lastError: result.error } : {}),
      // BullMQ's exponential backoff: delay × 2^(failed attempts − 1).
      ...(retries
        ? { nextAttemptAt: new Date(Date.now() + this.settings.backoffMs * 2 ** (attempt - 1)).toISOString() }
        : {}),
    };
    await job.updateProgress(progress as unknown as object);
    const outcome = result.ok ? 'delivered' : retries ? 'retrying' : 'failed';
    this.metrics.webhookDelivery(team, event, outcome);
    if (!result.ok) {
      const failure = `webhook ${target} of job ${jobId} (${event}): ${result.error}`;
      throw result.final ? new UnrecoverableError(failure) : new Error(failure);
    }
    return { statusCode: result.statusCode };
  }
}
