import { type OutcomeNotice, outcomeNotices, type StopReading, type Store } from '@switchyard/contracts';

/** A notification that a tool-call job settled: the outcome JSON, or BullMQ's failure reason. */
export type SettledNotice = OutcomeNotice;

/**
 * Reads the workers' outcome notices (OutcomeNotices: the Redis stream or PostgreSQL's outcome_notice)
 * with ONE connection for every server, so an orchestrator's connections do not grow with the number
 * of MCP servers (a QueueEvents per server queue would). Every orchestrator reads every notice and
 * keeps what it waits for.
 */
export class OutcomeListener {
  private readonly handlers = new Map<string, (notice: SettledNotice) => void>();
  private stopReading: StopReading | undefined;

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void,
  ) {}

  static key(queue: string, id: string): string {
    return `${queue}/${id}`;
  }

  /** Fixes the starting point now: earlier settlements are found by the waiter's own state check. */
  async start(): Promise<void> {
    this.stopReading = await outcomeNotices(this.store).listen(
      (notice) => this.deliver(notice),
      this.onError,
    );
  }

  on(queue: string, id: string, handler: (notice: SettledNotice) => void): () => void {
    const key = OutcomeListener.key(queue, id);
    this.handlers.set(key, handler);
    return () => {
      if (this.handlers.get(key) === handler) this.handlers.delete(key);
    };
  }

  async stop(): Promise<void> {
    const stop = this.stopReading;
    this.stopReading = undefined;
    await stop?.();
  }

  private deliver(notice: SettledNotice): void {
    this.handlers.get(OutcomeListener.key(notice.queue, notice.id))?.(notice);
  }
}
