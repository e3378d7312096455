import { POSTGRES_NOW_MS } from '@switchyard/contracts';
import type pg from 'pg';
import { type CallQuota, QUOTA_WINDOW_MS } from './call-quota.ts';

/**
 * Redis's script as one upsert on the database's clock: the row lock serializes replicas reserving for
 * one team. The arithmetic is the script's, in the same double precision: tat = max(stored, now),
 * reserved = tat + interval, delay = ceil(max(0, reserved - interval × burst - now)), and the row lives
 * until 1 s after `reserved` (an expired row reads as absent, i.e. 0). Redis stores `reserved` to 3
 * decimals; here it is kept whole, so the delays agree to well under a millisecond. Since `now` is a
 * whole ms, the row's expiry (Redis: PX ceil(reserved - now) + 1000) is ceil(reserved) + 1000.
 *
 * $1 team, $2 interval between calls (ms), $3 burst (calls that pass at once).
 */
export const RESERVE_CALL_SQL = `
WITH clock AS (
  SELECT ${POSTGRES_NOW_MS}::double precision AS now_ms
),
reserved AS (
  INSERT INTO call_quota AS quota (team, tat_ms, expires_at_ms)
  SELECT $1, clock.now_ms + $2::double precision, ceil(clock.now_ms + $2::double precision)::bigint + 1000
    FROM clock
  ON CONFLICT (team) DO UPDATE
     SET (tat_ms, expires_at_ms) = (
           SELECT next.tat_ms, ceil(next.tat_ms)::bigint + 1000
             FROM (SELECT GREATEST(
                            CASE WHEN quota.expires_at_ms > clock.now_ms THEN quota.tat_ms ELSE 0 END,
                            clock.now_ms) + $2::double precision AS tat_ms
                     FROM clock) AS next)
  RETURNING quota.tat_ms
)
SELECT ceil(GREATEST(0, reserved.tat_ms - $2::double precision * $3::double precision - clock.now_ms))::bigint
       AS delay_ms
  FROM reserved, clock`;

export class PostgresCallQuota implements CallQuota {
  constructor(private readonly pool: pg.Pool) {}

  async reserve(team: string, perMinute: number): Promise<number> {
    const { rows } = await this.pool.query<{ delay_ms: string }>(RESERVE_CALL_SQL, [
      team,
      QUOTA_WINDOW_MS / perMinute,
      perMinute,
    ]);
    const delay = rows[0]?.delay_ms;
    if (delay === undefined) throw new Error(`reserving a call slot for team "${team}" returned no row`);
    return Number(delay);
  }
}
