import { z } from 'zod';

/** Event-loop delay of a process over one window, in milliseconds. */
export interface EventLoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** What one scrape of a replica's /metrics says about its process. */
export interface ProcessMetrics {
  /** Over the window since the previous scrape. */
  eventLoop: EventLoopDelay;
  /** User + system CPU since the process started (`process_cpu_seconds_total`). */
  cpuSeconds: number;
}

const Value = z.coerce.number().nonnegative();

/** The value of an unlabelled metric in Prometheus's text format; throws when the scrape has none. */
function value(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Value.parse(line.slice(name.length + 1).trim());
}

/**
 * Reads an orchestrator's process metrics from its /metrics rather than instrumenting it: prom-client's
 * default metrics keep a `monitorEventLoopDelay` histogram (10 ms resolution) and reset it on every
 * scrape, so one scrape reports the window since the previous one, and a scrape that starts a window
 * discards what came before. A delay includes the 10 ms sampling interval: an idle loop reads ≈ 10 ms.
 */
export async function scrapeProcessMetrics(baseUrl: string): Promise<ProcessMetrics> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics: HTTP ${response.status}`);
  const text = await response.text();
  return {
    eventLoop: {
      p50: value(text, 'nodejs_eventloop_lag_p50_seconds') * 1000,
      p99: value(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      max: value(text, 'nodejs_eventloop_lag_max_seconds') * 1000,
    },
    cpuSeconds: value(text, 'process_cpu_seconds_total'),
  };
}
