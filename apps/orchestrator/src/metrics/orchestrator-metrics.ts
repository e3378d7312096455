import { Inject, Injectable } from '@nestjs/common';
import { type SwitchyardConfig, type ToolCallOutcome, WEBHOOK_EVENTS } from '@switchyard/contracts';
import {
  type HttpServerDurationLabel,
  httpServerDuration,
  httpServerDurationLabels,
} from '@switchyard/telemetry';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CONFIG } from '../runtime/tokens.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Jobs run from milliseconds (a cached /mcp call) to their deadline (an agent waiting for a person). */
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400];

/** What the orchestrator counts itself; gauges of queues and sessions are read on each scrape. */
@Injectable()
export class OrchestratorMetrics {
  readonly registry = new Registry();
  private readonly httpSeconds: Histogram<HttpServerDurationLabel>;
  private readonly outcomes: Counter<'server' | 'status' | 'team'>;
  private readonly callSeconds: Histogram<'server' | 'status'>;
  private readonly queueSeconds: Histogram<'server'>;
  private readonly ended: Counter<'kind' | 'status' | 'team'>;
  private readonly jobSeconds: Histogram<'kind' | 'status'>;
  private readonly submitted: Counter<'kind' | 'team'>;
  private readonly quotaRejections: Counter<'team' | 'quota'>;
  private readonly quotaDelays: Counter<'team'>;
  private readonly webhookDeliveries: Counter<'team' | 'event' | 'result'>;

  constructor(@Inject(CONFIG) config: SwitchyardConfig) {
    // Unprefixed (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), as stock Node.js
    // dashboards and alerts expect them; the scrape's job and instance labels say which process it is.
    collectDefaultMetrics({ register: this.registry });
    // The same histogram as the workers' (libs/telemetry), so one query reads both apps.
    this.httpSeconds = new Histogram({ ...httpServerDuration(), registers: [this.registry] });
    this.outcomes = new Counter({
      name: 'switchyard_tool_call_outcomes_total',
      help: 'Tool calls of agent and batch jobs, by the outcome they ended with',
      // Teams come from the config, so the label's values are bounded.
      labelNames: ['server', 'status', 'team'],
      registers: [this.registry],
    });
    this.callSeconds = new Histogram({
      name: 'switchyard_tool_call_duration_seconds',
      help: 'Run time of tool calls on their MCP server',
      labelNames: ['server', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.queueSeconds = new Histogram({
      name: 'switchyard_tool_call_queue_wait_seconds',
      help: 'Time tool calls waited in their server queue before a worker took them',
      labelNames: ['server'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.ended = new Counter({
      name: 'switchyard_jobs_ended_total',
      help: 'Jobs that ended, by kind (agent, batch, mcp) and final status',
      labelNames: ['kind', 'status', 'team'],
      registers: [this.registry],
    });
    this.jobSeconds = new Histogram({
      name: 'switchyard_job_duration_seconds',
      help: 'Time from a job’s submission to its end, by kind (agent, batch, mcp) and final status',
      // No team: kind × status × buckets is already the widest series set here.
      labelNames: ['kind', 'status'],
      buckets: JOB_BUCKETS,
      registers: [this.registry],
    });
    this.submitted = new Counter({
      name: 'switchyard_jobs_submitted_total',
      help: 'Jobs accepted by POST /v1/jobs',
      labelNames: ['kind', 'team'],
      registers: [this.registry],
    });
    this.quotaRejections = new Counter({
      name: 'switchyard_quota_rejections_total',
      help: 'Job submissions refused with 429 because the team was at a quota (e.g. maxConcurrentJobs)',
      labelNames: ['team', 'quota'],
      registers: [this.registry],
    });
    this.quotaDelays = new Counter({
      name: 'switchyard_quota_delayed_calls_total',
      help: 'Tool calls queued with a delay because the team was past its callsPerMinute',
      labelNames: ['team'],
      registers: [this.registry],
    });
    this.webhookDeliveries = new Counter({
      name: 'switchyard_webhook_deliveries_total',
      help: 'Webhook delivery attempts: delivered, retrying (failed, tried again) or failed (for good)',
      labelNames: ['team', 'event', 'result'],
      registers: [this.registry],
    });
    this.startAtZero(Object.keys(config.teams));
  }

  /**
   * The rare events' series exist from the start at 0 (teams are the configured ones), so that rate()
   * sees their first increase and a dashboard or an alert on them reads a series, not an absence.
   */
  private startAtZero(teams: string[]): void {
    for (const team of teams) {
      this.quotaRejections.inc({ team, quota: 'maxConcurrentJobs' }, 0);
      this.quotaDelays.inc({ team }, 0);
      for (const event of WEBHOOK_EVENTS)
        for (const result of ['delivered', 'retrying', 'failed'])
          this.webhookDeliveries.inc({ team, event, result }, 0);
    }
  }

  /** A gauge whose values are read at scrape time. */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    read: (set: (labels: Record<L, string>, value: number) => void) => Promise<void>,
  ): void {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        await read((labels, value) => this.set(labels, value));
      },
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpSeconds.observe(httpServerDurationLabels(method, route, status), seconds);
  }

  toolCall(outcome: ToolCallOutcome, team: string): void {
    const server = outcome.server || 'unknown';
    this.outcomes.inc({ server, status: outcome.status, team });
    if (outcome.runMs > 0) this.callSeconds.observe({ server, status: outcome.status }, outcome.runMs / 1000);
    if (outcome.attempts > 0) this.queueSeconds.observe({ server }, outcome.queuedMs / 1000);
  }

  /** A job's end, counted once, with its run time since `createdAt` (its submission). */
  jobEnded(job: { kind: string; team: string; createdAt: Date }, status: string): void {
    this.ended.inc({ kind: job.kind, status, team: job.team });
    this.jobSeconds.observe(
      { kind: job.kind, status },
      Math.max(0, Date.now() - job.createdAt.getTime()) / 1000,
    );
  }

  jobSubmitted(kind: string, team: string): void {
    this.submitted.inc({ kind, team });
  }

  quotaRejected(team: string, quota: string): void {
    this.quotaRejections.inc({ team, quota });
  }

  callDelayed(team: string): void {
    this.quotaDelays.inc({ team });
  }

  webhookDelivery(team: string, event: string, result: 'delivered' | 'retrying' | 'failed'): void {
    this.webhookDeliveries.inc({ team, event, result });
  }
}
