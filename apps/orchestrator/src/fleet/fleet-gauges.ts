import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  AGENT_RUNS_QUEUE,
  SESSION_STATES,
  type SwitchyardConfig,
  toolQueueName,
} from '@switchyard/contracts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { AgentRunQueue } from '../jobs/agent-run-queue.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import { CONFIG } from '../runtime/tokens.ts';

const QUEUE_STATES = ['waiting', 'prioritized', 'delayed', 'active'] as const;

/**
 * Gauges read from the queue store at scrape time: every server queue's depth (what KEDA scales workers
 * on), the age of its longest-waiting call, the fleet's live workers and their MCP sessions by state,
 * as the workers' heartbeats report them. Each read is bounded by the configured servers.
 */
@Injectable()
export class FleetGauges implements OnModuleInit {
  constructor(
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(AgentRunQueue) private readonly agentRuns: AgentRunQueue,
    @Inject(CatalogReader) private readonly catalog: CatalogReader,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'switchyard_queue_jobs',
      'Jobs in each BullMQ queue by state',
      ['queue', 'server', 'state'],
      async (set) => {
        for (const server of Object.keys(this.config.servers)) {
          const counts = await this.dispatcher.queueCounts(server);
          for (const state of QUEUE_STATES)
            set({ queue: toolQueueName(server), server, state }, counts[state] ?? 0);
        }
        const runs = await this.agentRuns.queue.getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES)
          set({ queue: AGENT_RUNS_QUEUE, server: '', state }, runs[state] ?? 0);
      },
    );
    this.metrics.gauge(
      'switchyard_queue_oldest_waiting_call_age_seconds',
      'How long the longest-waiting call on each server queue has been ready to run (0: none waits)',
      ['server'],
      async (set) => {
        const now = Date.now();
        for (const server of Object.keys(this.config.servers)) {
          const since = await this.dispatcher.oldestWaitingSince(server);
          set({ server }, since === undefined ? 0 : Math.max(0, now - since) / 1000);
        }
      },
    );
    this.metrics.gauge(
      'switchyard_live_workers',
      'Live workers (heartbeat not expired) serving each server, whatever their session’s state',
      ['server'],
      async (set) => {
        const workers = await this.catalog.liveWorkers();
        for (const server of Object.keys(this.config.servers))
          set({ server }, workers.filter((beat) => beat.sessions[server] !== undefined).length);
      },
    );
    this.metrics.gauge(
      'switchyard_mcp_sessions',
      'MCP sessions of live workers by server and state',
      ['server', 'state'],
      async (set) => {
        const workers = await this.catalog.liveWorkers();
        for (const server of Object.keys(this.config.servers)) {
          for (const state of SESSION_STATES) {
            set({ server, state }, workers.filter((beat) => beat.sessions[server]?.state === state).length);
          }
        }
      },
    );
  }
}
