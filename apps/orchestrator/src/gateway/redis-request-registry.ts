import type { RedisConnection } from '@switchyard/contracts';
import { AMBIGUOUS, ENTRY_TTL_SECONDS, requestIdKey } from './request-entry.ts';
import type { RequestRegistry } from './request-registry.ts';

/** The registry as one Redis string per (team, request id), expiring on Redis's clock. */
export class RedisRequestRegistry implements RequestRegistry {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
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

  async jobOf(team: string, requestId: string | number): Promise<string | undefined> {
    const jobId = await this.redis.get(this.key(team, requestId));
    return jobId && jobId !== AMBIGUOUS ? jobId : undefined;
  }

  private key(team: string, requestId: string | number): string {
    return `${this.prefix}:mcp-requests:${team}:${requestIdKey(requestId)}`;
  }
}
