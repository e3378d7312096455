import { Injectable } from '@nestjs/common';
import type { ToolCallOutcome } from '@switchyard/contracts';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** What the orchestrator counts itself; gauges of queues and sessions are read on each scrape. */
@Injectable()
export class OrchestratorMetrics {
  readonly registry = new Registry();
  private readonly outcomes: Counter<'server' | 'status' | 'team'>;
  private readonly callSeconds: Histogram<'server' | 'status'>;
  private readonly queueSeconds: Histogram<'server'>;
  private readonly runs: Counter<'kind' | 'status' | 'team'>;
  private readonly submitted: Counter<'kind' | 'team'>;
  private readonly quotaRejections: Counter<'team' | 'quota'>;
  private readonly quotaDelays: Counter<'team'>;
  private readonly webhookDeliveries: Counter<'team' | 'event' | 'result'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_orchestrator_' });
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
    this.runs = new Counter({
      name: 'switchyard_agent_runs_total',
      help: 'Job runs that ended, by kind and final status',
      labelNames: ['kind', 'status', 'team'],
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

  toolCall(outcome: ToolCallOutcome, team: string): void {
    const server = outcome.server || 'unknown';
    this.outcomes.inc({ server, status: outcome.status, team });
    if (outcome.runMs > 0) this.callSeconds.observe({ server, status: outcome.status }, outcome.runMs / 1000);
    if (outcome.attempts > 0) this.queueSeconds.observe({ server }, outcome.queuedMs / 1000);
  }

  runEnded(kind: string, status: string, team: string): void {
    this.runs.inc({ kind, status, team });
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
