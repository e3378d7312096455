import { createHash, timingSafeEqual } from 'node:crypto';
import type { OrchestratorSettings } from '@switchyard/contracts';
import { PROBLEM_KINDS, type Problem, problemType } from '../http/problem.ts';

export type MetricsSettings = OrchestratorSettings['metrics'];

/** Sent with a 401 so that a scraper (or a person with curl) learns which scheme is wanted. */
export const METRICS_CHALLENGE = 'Bearer realm="switchyard metrics"';

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Why a scrape with this Authorization header is refused, or undefined when it may read /metrics
 * (always, when no `orchestrator.metrics.bearerToken` is set). Compared in constant time, over digests
 * so that the length of the token does not show either.
 */
export function metricsRefusal(
  authorization: string | undefined,
  settings: MetricsSettings,
): string | undefined {
  if (settings.bearerToken === undefined) return undefined;
  const sent = BEARER.exec(authorization ?? '')?.[1];
  if (!sent) return 'missing "Authorization: Bearer <orchestrator.metrics.bearerToken>" header';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(sent), digest(settings.bearerToken)) ? undefined : 'wrong metrics token';
}

/** The 401 problem of a refused scrape, for the metrics port (which has no Nest filter in front). */
export function unauthorizedProblem(detail: string): Problem {
  return {
    type: problemType('unauthorized'),
    title: PROBLEM_KINDS.unauthorized.title,
    status: 401,
    detail,
    instance: '/metrics',
  };
}

/** Prometheus text exposition format 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
