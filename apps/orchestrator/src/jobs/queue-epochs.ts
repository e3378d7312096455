import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Store } from '@switchyard/contracts';
import { STORE } from '../runtime/tokens.ts';
import { PostgresEpochSlots } from './postgres-epochs.ts';
import { RedisEpochSlots } from './redis-epochs.ts';

/** The hash tag of the `{agent-runs}` queue: its epoch vouches for every run's BullMQ job. */
export const RUNS_SLOT = 'agent-runs';

export interface EpochReading {
  epoch: string;
  /** Not the epoch this process saw last (or none seen yet): the queues may have lost this slot's data. */
  changed: boolean;
  /** Seen before, and now absent or another: the queues lost this slot's data since. */
  lost: boolean;
  previous?: string;
}

/**
 * Where the queue store keeps one epoch per slot: a random id created when absent, kept with the queues
 * so that it is lost exactly when they are (a Redis key; a row of the queue schema on PostgreSQL).
 */
export interface EpochSlots {
  /** The slot's epoch now, created as `candidate` when it has none; every caller gets the same one. */
  epochOf(tag: string, candidate: string): Promise<string>;
}

/** The store's epoch slots, by backend. */
export function epochSlots(store: Store): EpochSlots {
  return store.kind === 'redis'
    ? new RedisEpochSlots(store.redis, store.prefix)
    : new PostgresEpochSlots(store.pool);
}

/**
 * Queue epochs: a slot whose epoch went missing or changed lost its data, so its queue jobs can no
 * longer prove or disprove that a call was queued (docs/semantics.md §18; on PostgreSQL "the queue
 * schema lost its data", docs/postgres-backend.md §4). What changed is judged against the epoch this
 * process read last, so the memory is here and the store only keeps the current one.
 */
@Injectable()
export class QueueEpochs {
  /** The epoch each slot had when this process last read it. */
  private readonly seen = new Map<string, string>();
  private readonly slots: EpochSlots;

  constructor(@Inject(STORE) store: Store) {
    this.slots = epochSlots(store);
  }

  /**
   * The epoch to record with a call about to be added to queue `tools.{tag}`: the one last seen, read
   * first when none was. Stale is safe: it was read before the add, so the add went to that epoch's
   * queues or later ones, and a later loss shows as another epoch. Null when the store cannot say (the
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

  /** The slot's epoch now, from the store (created when absent). Decisions about lost jobs use this one. */
  async read(tag: string): Promise<EpochReading> {
    const epoch = await this.slots.epochOf(tag, randomUUID());
    const previous = this.seen.get(tag);
    this.seen.set(tag, epoch);
    return {
      epoch,
      changed: previous !== epoch,
      lost: previous !== undefined && previous !== epoch,
      ...(previous ? { previous } : {}),
    };
  }
}
