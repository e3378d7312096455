import { bullmqBinding, type Store, toolQueueName } from '@switchyard/contracts';
import { Queue } from 'bullmq';

/**
 * One BullMQ Queue per MCP server, created on first use. On Redis they share the dispatcher's command
 * connection, so an orchestrator's Redis connections do not grow with the number of servers; on
 * PostgreSQL each holds a small pool (store.ts, bullmqBinding).
 */
export class ToolQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void,
  ) {}

  of(server: string): Queue {
    let queue = this.queues.get(server);
    if (!queue) {
      const binding = bullmqBinding(this.store);
      queue = new Queue(toolQueueName(server), binding.options, binding.factory as never);
      queue.on('error', this.onError);
      this.queues.set(server, queue);
    }
    return queue;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
