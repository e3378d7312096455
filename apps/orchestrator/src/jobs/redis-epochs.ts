import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type RedisConnection, redisKeys } from '@switchyard/contracts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, REDIS } from '../runtime/tokens.ts';

/** The hash tag of the `{agent-runs}` queue: its epoch vouches for every run's BullMQ job. */
export const RUNS_SLOT = 'agent-runs';

export interface EpochReading {
  epoch: string;
  /** Not the epoch this process saw last (or none seen yet): Redis may have lost this slot's data. */
  changed: boolean;
  /** Seen before, and now absent or another: Redis lost this slot's data since. */
  lost: boolean;
  previous?: string;
}

/**
 * Redis epochs (redisKeys.epoch): a random id per hash slot that matters, created with SET NX when
 * absent. A slot whose epoch went missing or changed lost its data, so its queue jobs can no longer
 * prove or disprove that a call was queued (docs/semantics.md §18).
 */
@Injectable()
export class RedisEpochs {
  /** The epoch each slot had when this process last read it. */
  private readonly seen = new Map<string, string>();

  constructor(
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(ENV) private readonly env: OrchestratorEnv,
  ) {}

  /**
   * The epoch to record with a call about to be added to queue `tools.{tag}`: the one last seen, read
   * first when none was. Stale is safe: it was read before the add, so the add went to that epoch's
   * Redis or a later one, and a later loss shows as another epoch. Null when Redis cannot say (the
   * call's epoch is then unknown, which a re-dispatch treats as another epoch).
   */
  async forDispatch(tag: string): Promise<string | null> {
    const seen = this.seen.get(tag);
    if (seen) return seen;
    return this.read(tag).then(
      (reading) => reading.epoch,
      () => null,
    );
  }

  /** The slot's epoch now, from Redis (created when absent). Decisions about lost jobs use this one. */
  async read(tag: string): Promise<EpochReading> {
    const key = redisKeys.epoch(this.env.prefix, tag);
    // Another replica may create it at the same moment: SET NX picks one, and everyone reads that one.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const candidate = randomUUID();
      const created = (await this.redis.set(key, candidate, 'NX')) === 'OK';
      const epoch = created ? candidate : await this.redis.get(key);
      if (!epoch) continue; // deleted between the two commands (a FLUSHALL): create it again
      const previous = this.seen.get(tag);
      this.seen.set(tag, epoch);
      return {
        epoch,
        changed: previous !== epoch,
        lost: previous !== undefined && previous !== epoch,
        ...(previous ? { previous } : {}),
      };
    }
    throw new Error(`the Redis epoch ${key} vanished three times while it was being read`);
  }
}
