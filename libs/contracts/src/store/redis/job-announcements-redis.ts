import type { RedisConnection } from '../../redis-connection.ts';
import type { Unsubscribe } from '../cancel-requests.ts';
import type { JobAnnouncementHandlers, JobAnnouncements } from '../job-announcements.ts';
import { subscribeChannels } from './subscribed-connection.ts';

/** Job announcements over Redis pub/sub: `<prefix>:job-events` and `<prefix>:job-cancel`, the job id as message. */
export class RedisJobAnnouncements implements JobAnnouncements {
  private readonly channels: { events: string; cancel: string };

  constructor(
    private readonly redis: RedisConnection,
    prefix: string,
  ) {
    this.channels = { events: `${prefix}:job-events`, cancel: `${prefix}:job-cancel` };
  }

  async announce(jobId: string): Promise<void> {
    await this.redis.publish(this.channels.events, jobId);
  }

  async cancel(jobId: string): Promise<void> {
    await this.redis.publish(this.channels.cancel, jobId);
  }

  async listen(
    handlers: JobAnnouncementHandlers,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const subscriber = await subscribeChannels(
      this.redis.duplicate(),
      { [this.channels.events]: handlers.onEvent, [this.channels.cancel]: handlers.onCancel },
      options.onError,
    );
    return async () => {
      subscriber.disconnect();
    };
  }
}
