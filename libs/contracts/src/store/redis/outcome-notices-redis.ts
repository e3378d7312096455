import { redisKeys } from '../../naming.ts';
import { type OutcomeNotice, outcomeNoticeFields, parseOutcomeNotice } from '../../outcome-notice.ts';
import type { RedisConnection } from '../../redis-connection.ts';
import type { OutcomeNotices, StopReading } from '../outcome-notices.ts';

/** Outcomes stream entries are small pointers plus the outcome; keep roughly this many. */
export const OUTCOME_STREAM_MAXLEN = 50_000;

const BLOCK_MS = 5_000;
const BATCH = 500;

/** The outcomes stream (`redisKeys.outcomes`): XADD capped by length, one blocking XREAD per reader. */
export class RedisOutcomeNotices implements OutcomeNotices {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async announce(notice: OutcomeNotice): Promise<void> {
    await this.redis.xadd(
      redisKeys.outcomes(this.prefix),
      'MAXLEN',
      '~',
      OUTCOME_STREAM_MAXLEN,
      '*',
      ...outcomeNoticeFields(notice),
    );
  }

  async listen(
    handler: (notice: OutcomeNotice) => void,
    onError: (error: unknown) => void,
  ): Promise<StopReading> {
    // Dedicated to this reader: XREAD BLOCK holds it.
    const blocking = this.redis.duplicate();
    const key = redisKeys.outcomes(this.prefix);
    let lastId: string;
    try {
      // Start from the stream's current end, fixed now: anything that settles after this is seen even if
      // the first XREAD is issued later. Earlier settlements are found by the waiter's own state check.
      const last = (await blocking.xrevrange(key, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
      lastId = last[0]?.[0] ?? '0-0';
    } catch (error) {
      blocking.disconnect();
      throw error;
    }
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          const reply = (await blocking.xread(
            'COUNT',
            BATCH,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            key,
            lastId,
          )) as Array<[string, Array<[string, string[]]>]> | null;
          for (const [, entries] of reply ?? []) {
            for (const [entryId, fields] of entries) {
              lastId = entryId;
              // An entry that is not a notice is skipped: its waiter still settles in a reconcile round.
              const notice = parseOutcomeNotice(fields);
              if (notice) handler(notice);
            }
          }
        } catch (error) {
          if (!running) return;
          onError(error);
          // ioredis reconnects on its own; don't spin while it does.
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    })();
    return async () => {
      running = false;
      blocking.disconnect();
      await loop.catch(() => undefined);
    };
  }
}
