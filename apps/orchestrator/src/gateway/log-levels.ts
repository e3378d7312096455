import { createHash } from 'node:crypto';
import {
  type LogLevel,
  LogLevelSchema,
  POSTGRES_NOW_MS,
  type RedisConnection,
  type Store,
} from '@switchyard/contracts';
import type pg from 'pg';

/** A level set lasts this long after it was last set: a client that comes back a day later sets it again. */
export const LOG_LEVEL_TTL_SECONDS = 24 * 3600;

/**
 * The level a 2025-11-25 /mcp client set with `logging/setLevel`, kept next to the queues. The revision
 * scopes the level to a session, but /mcp is stateless (no session; the next request may reach another
 * replica), so it is kept per team and API key — the client as a stateless endpoint knows it — and every
 * later call made with that key is relayed at it until another setLevel (docs/semantics.md §16, Logs).
 * An abstract class rather than an interface so that it is also the injection token.
 */
export abstract class LogLevels {
  abstract set(team: string, client: string, level: LogLevel): Promise<void>;
  /** The level last set, or undefined when none is (or it expired). */
  abstract get(team: string, client: string): Promise<LogLevel | undefined>;
}

/** Who the client is, without keeping its key: a SHA-256 prefix of the bearer token. */
export function logLevelClient(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

export function logLevels(store: Store): LogLevels {
  return store.kind === 'redis'
    ? new RedisLogLevels(store.redis, store.prefix)
    : new PostgresLogLevels(store.pool);
}

/** One Redis string per (team, client), expiring on Redis's clock. */
class RedisLogLevels extends LogLevels {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {
    super();
  }

  async set(team: string, client: string, level: LogLevel): Promise<void> {
    await this.redis.set(this.key(team, client), level, 'EX', LOG_LEVEL_TTL_SECONDS);
  }

  async get(team: string, client: string): Promise<LogLevel | undefined> {
    const parsed = LogLevelSchema.safeParse(await this.redis.get(this.key(team, client)));
    return parsed.success ? parsed.data : undefined;
  }

  private key(team: string, client: string): string {
    return `${this.prefix}:mcp-log-level:${team}:${client}`;
  }
}

export const SET_LOG_LEVEL_SQL = `
  INSERT INTO mcp_log_level (team, client, level, expires_at_ms)
  VALUES ($1, $2, $3, ${POSTGRES_NOW_MS} + $4)
  ON CONFLICT (team, client) DO UPDATE SET level = EXCLUDED.level, expires_at_ms = EXCLUDED.expires_at_ms`;
/** An expired row is never read as present, whether or not the sweep has run. */
export const GET_LOG_LEVEL_SQL = `
  SELECT level FROM mcp_log_level WHERE team = $1 AND client = $2 AND expires_at_ms > ${POSTGRES_NOW_MS}`;

/** Rows of the queue schema's `mcp_log_level` table (docs/postgres-backend.md §2). */
class PostgresLogLevels extends LogLevels {
  constructor(private readonly pool: pg.Pool) {
    super();
  }

  async set(team: string, client: string, level: LogLevel): Promise<void> {
    await this.pool.query(SET_LOG_LEVEL_SQL, [team, client, level, LOG_LEVEL_TTL_SECONDS * 1000]);
  }

  async get(team: string, client: string): Promise<LogLevel | undefined> {
    const { rows } = await this.pool.query<{ level: string }>(GET_LOG_LEVEL_SQL, [team, client]);
    const parsed = LogLevelSchema.safeParse(rows[0]?.level);
    return parsed.success ? parsed.data : undefined;
  }
}
