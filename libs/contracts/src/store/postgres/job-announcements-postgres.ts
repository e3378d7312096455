import type { Unsubscribe } from '../cancel-requests.ts';
import type { JobAnnouncementHandlers, JobAnnouncements } from '../job-announcements.ts';
import type { PostgresStore } from '../store.ts';
import { notificationChannel } from './notification-channel.ts';
import { NotificationListener } from './notification-listener.ts';

export const NOTIFY_JOB_SQL = 'SELECT pg_notify($1, $2)';

/** Job announcements as NOTIFY on `<schema>_job_events` and `<schema>_job_cancel`, the job id as payload. */
export class PostgresJobAnnouncements implements JobAnnouncements {
  private readonly channels: { events: string; cancel: string };

  constructor(private readonly store: PostgresStore) {
    this.channels = {
      events: notificationChannel(store.schema, 'job_events'),
      cancel: notificationChannel(store.schema, 'job_cancel'),
    };
  }

  async announce(jobId: string): Promise<void> {
    await this.store.pool.query(NOTIFY_JOB_SQL, [this.channels.events, jobId]);
  }

  async cancel(jobId: string): Promise<void> {
    await this.store.pool.query(NOTIFY_JOB_SQL, [this.channels.cancel, jobId]);
  }

  async listen(
    handlers: JobAnnouncementHandlers,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const listener = await NotificationListener.open({
      url: this.store.url,
      applicationName: options.connectionName,
      channels: { [this.channels.events]: handlers.onEvent, [this.channels.cancel]: handlers.onCancel },
      ...(handlers.onResumed ? { onReconnected: handlers.onResumed } : {}),
      onError: (error, what) => options.onError(new Error(`job announcements: ${what}`, { cause: error })),
    });
    return () => listener.close();
  }
}
