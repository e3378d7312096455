import { type RedisConnection, toolQueueName } from '@switchyard/contracts';
import { Queue } from 'bullmq';

/**
 * One BullMQ Queue per MCP server, created on first use and sharing the dispatcher's command
 * connection, so an orchestrator's Redis connections do not grow with the number of servers.
 */
export class ToolQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  of(server: string): Queue {
    let queue = this.queues.get(server);
    if (!queue) {
      queue = new Queue(toolQueueName(server), { connection: this.redis, prefix: this.prefix });
      queue.on('error', this.onError);
      this.queues.set(server, queue);
    }
    return queue;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
