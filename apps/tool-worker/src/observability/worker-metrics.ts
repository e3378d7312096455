import { SESSION_STATES, type StoredToolCallOutcome } from '@switchyard/contracts';
import {
  type HttpServerDurationLabel,
  httpServerDuration,
  httpServerDurationLabels,
} from '@switchyard/telemetry';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { SessionPool } from '../sessions/session-pool.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Prometheus metrics of one worker process, scraped at /metrics. */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly calls: Counter<'server' | 'tool' | 'status'>;
  private readonly runSeconds: Histogram<'server' | 'status'>;
  private readonly queueSeconds: Histogram<'server'>;
  private readonly timeoutSeconds: Gauge<'server' | 'tool'>;
  private readonly httpSeconds: Histogram<HttpServerDurationLabel>;

  constructor(pool: SessionPool) {
    // Unprefixed (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), as stock Node.js
    // dashboards and alerts expect them; the scrape's job and instance labels say which process it is.
    collectDefaultMetrics({ register: this.registry });
    this.calls = new Counter({
      name: 'switchyard_worker_tool_calls_total',
      help: 'Tool calls this worker settled, by outcome status',
      labelNames: ['server', 'tool', 'status'],
      registers: [this.registry],
    });
    this.runSeconds = new Histogram({
      name: 'switchyard_worker_tool_call_duration_seconds',
      help: 'Time from sending tools/call to its answer (last attempt)',
      labelNames: ['server', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.queueSeconds = new Histogram({
      name: 'switchyard_worker_tool_call_queue_wait_seconds',
      help: 'Time a call waited in its queue before this worker took it',
      labelNames: ['server'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.timeoutSeconds = new Gauge({
      name: 'switchyard_worker_tool_call_timeout_seconds',
      help: 'Per-attempt timeout of the last call of each tool this worker sent (static timeoutMs or adaptive)',
      labelNames: ['server', 'tool'],
      registers: [this.registry],
    });
    // The orchestrator's histogram (libs/telemetry), so one query reads the API and the workers' ports.
    this.httpSeconds = new Histogram({ ...httpServerDuration(), registers: [this.registry] });
    new Gauge({
      name: 'switchyard_worker_mcp_sessions',
      help: 'This worker’s MCP sessions by state (1 = the session is in that state)',
      labelNames: ['server', 'state'],
      registers: [this.registry],
      collect() {
        for (const [server, status] of Object.entries(pool.statuses())) {
          for (const state of SESSION_STATES) this.set({ server, state }, status.state === state ? 1 : 0);
        }
      },
    });
  }

  record(outcome: StoredToolCallOutcome): void {
    this.calls.inc({ server: outcome.server, tool: outcome.tool, status: outcome.status });
    this.queueSeconds.observe({ server: outcome.server }, outcome.queuedMs / 1000);
    if (outcome.timeoutMs !== undefined) {
      this.timeoutSeconds.set({ server: outcome.server, tool: outcome.tool }, outcome.timeoutMs / 1000);
    }
    if (outcome.runMs > 0)
      this.runSeconds.observe({ server: outcome.server, status: outcome.status }, outcome.runMs / 1000);
  }

  /** One answer on WORKER_HTTP_PORT; `route` is the endpoint it matched, or empty (worker-http.ts). */
  httpRequest(method: string | undefined, route: string, status: number, seconds: number): void {
    this.httpSeconds.observe(httpServerDurationLabels(method, route, status), seconds);
  }
}
