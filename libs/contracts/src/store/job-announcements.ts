import type { Unsubscribe } from './cancel-requests.ts';
import { PostgresJobAnnouncements } from './postgres/job-announcements-postgres.ts';
import { RedisJobAnnouncements } from './redis/job-announcements-redis.ts';
import type { Store } from './store.ts';

export interface JobAnnouncementHandlers {
  /** New events of this job may be in the job store. */
  onEvent: (jobId: string) => void;
  /** Someone asked to cancel this job. */
  onCancel: (jobId: string) => void;
  /**
   * The connection was lost and is back: announcements of the gap are gone (PostgreSQL only; Redis's
   * subscriber re-subscribes by itself and says nothing, as before).
   */
  onResumed?: () => void;
}

/**
 * Wake-ups between orchestrator replicas about agent jobs (docs/postgres-backend.md §2, "job-event
 * announcements, job cancels"): the events and the cancel are in PostgreSQL already, so a lost
 * announcement delays a watcher, never loses anything.
 */
export interface JobAnnouncements {
  announce(jobId: string): Promise<void>;
  cancel(jobId: string): Promise<void>;
  listen(
    handlers: JobAnnouncementHandlers,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe>;
}

export function jobAnnouncements(store: Store): JobAnnouncements {
  return store.kind === 'redis'
    ? new RedisJobAnnouncements(store.redis, store.prefix)
    : new PostgresJobAnnouncements(store);
}
