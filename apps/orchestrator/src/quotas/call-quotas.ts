import { Inject, Injectable } from '@nestjs/common';
import type { Store, SwitchyardConfig } from '@switchyard/contracts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER, STORE } from '../runtime/tokens.ts';
import { type CallQuota, callQuota } from './call-quota.ts';

/**
 * teams.<t>.callsPerMinute. An agent's call past the limit is not failed (the model would only see an
 * error and try again): it is queued with a BullMQ delay until its slot, and its queue deadline moves
 * by the same delay. The job's own deadline still bounds the whole run.
 */
@Injectable()
export class CallQuotas {
  private readonly quota: CallQuota;

  constructor(
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(STORE) store: Store,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.quota = callQuota(store);
  }

  /** How long (ms) a call of `team` must wait before it may be sent; 0 for a team without the quota. */
  async delayFor(team: string | undefined, context: { jobId: string; toolCallId: string }): Promise<number> {
    const perMinute = team ? this.config.teams[team]?.callsPerMinute : undefined;
    if (!team || !perMinute) return 0;
    let delayMs: number;
    try {
      delayMs = await this.quota.reserve(team, perMinute);
    } catch (error) {
      // The store is what the call is queued on too: if it cannot answer this, the add reports the outage.
      this.log.warn(
        { team, job_id: context.jobId, err: error },
        'could not reserve a call slot; sending now',
      );
      return 0;
    }
    if (delayMs > 0) {
      this.metrics.callDelayed(team);
      this.log.debug(
        { team, job_id: context.jobId, tool_call_id: context.toolCallId, delay_ms: delayMs },
        'call delayed by the team callsPerMinute',
      );
    }
    return delayMs;
  }
}
