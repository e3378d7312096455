import {
  type OutcomeNotice,
  parseOutcomeNotice,
  type RedisConnection,
  redisKeys,
} from '@switchyard/contracts';

/** A notification that a tool-call job settled: the outcome JSON, or BullMQ's failure reason. */
export type SettledNotice = OutcomeNotice;

const BLOCK_MS = 5_000;
const BATCH = 500;

/**
 * Reads the workers' outcomes stream with ONE blocking connection for every server, so an
 * orchestrator's Redis connections do not grow with the number of MCP servers (a QueueEvents per
 * server queue would). Every orchestrator reads the whole stream and keeps what it waits for.
 */
export class OutcomeListener {
  private readonly handlers = new Map<string, (notice: SettledNotice) => void>();
  private lastId = '$';
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    /** Dedicated to this listener: XREAD BLOCK holds it. */
    private readonly blocking: RedisConnection,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  static key(queue: string, id: string): string {
    return `${queue}/${id}`;
  }

  async start(): Promise<void> {
    // Start from the stream's current end, fixed now: anything that settles after this is seen even if
    // the first XREAD is issued later. Earlier settlements are found by the waiter's own state check.
    const last = (await this.blocking.xrevrange(
      redisKeys.outcomes(this.prefix),
      '+',
      '-',
      'COUNT',
      1,
    )) as Array<[string, string[]]>;
    this.lastId = last[0]?.[0] ?? '0-0';
    this.running = true;
    this.loop = this.run();
  }

  on(queue: string, id: string, handler: (notice: SettledNotice) => void): () => void {
    const key = OutcomeListener.key(queue, id);
    this.handlers.set(key, handler);
    return () => {
      if (this.handlers.get(key) === handler) this.handlers.delete(key);
    };
  }

  async stop(): Promise<void> {
    this.running = false;
    this.blocking.disconnect();
    await this.loop?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    const key = redisKeys.outcomes(this.prefix);
    while (this.running) {
      try {
        const reply = (await this.blocking.xread(
          'COUNT',
          BATCH,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          key,
          this.lastId,
        )) as Array<[string, Array<[string, string[]]>]> | null;
        for (const [, entries] of reply ?? []) {
          for (const [entryId, fields] of entries) {
            this.lastId = entryId;
            this.deliver(fields);
          }
        }
      } catch (error) {
        if (!this.running) return;
        this.onError(error);
        // ioredis reconnects on its own; don't spin while it does.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  private deliver(fields: string[]): void {
    // An entry that is not a notice is skipped: its waiter still settles from the job in a reconcile round.
    const notice = parseOutcomeNotice(fields);
    if (!notice) return;
    this.handlers.get(OutcomeListener.key(notice.queue, notice.id))?.(notice);
  }
}
