import { Inject, Injectable } from '@nestjs/common';
import type { RedisConnection } from '@switchyard/contracts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, REDIS } from '../runtime/tokens.ts';

/** Marks a request id that two in-flight calls of one team share: a cancel for it names neither. */
const AMBIGUOUS = '?';
/** A call's entry outlives no call: the longest a client may hold a tools/call open. */
const ENTRY_TTL_SECONDS = 24 * 3600;

/**
 * JSON-RPC request id → job of a tools/call in flight, per team, in Redis. On 2025-11-25 a client cancels
 * with a separate `notifications/cancelled` POST naming only the request id, which any replica may
 * receive; stateless serving has no session to scope the id, so the team does, and an id two of the
 * team's clients use at once is left alone rather than cancelling the wrong call.
 */
@Injectable()
export class RequestRegistry {
  constructor(
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(ENV) private readonly env: OrchestratorEnv,
  ) {}

  async register(team: string, requestId: string | number, jobId: string): Promise<void> {
    const key = this.key(team, requestId);
    const set = await this.redis.set(key, jobId, 'EX', ENTRY_TTL_SECONDS, 'NX');
    if (set === null && (await this.redis.get(key)) !== jobId) {
      await this.redis.set(key, AMBIGUOUS, 'EX', ENTRY_TTL_SECONDS);
    }
  }

  async release(team: string, requestId: string | number, jobId: string): Promise<void> {
    const key = this.key(team, requestId);
    if ((await this.redis.get(key)) === jobId) await this.redis.del(key);
  }

  /** The job of the team's call with this request id; undefined when there is none or it is ambiguous. */
  async jobOf(team: string, requestId: string | number): Promise<string | undefined> {
    const jobId = await this.redis.get(this.key(team, requestId));
    return jobId && jobId !== AMBIGUOUS ? jobId : undefined;
  }

  private key(team: string, requestId: string | number): string {
    return `${this.env.prefix}:mcp-requests:${team}:${typeof requestId}:${String(requestId)}`;
  }
}
