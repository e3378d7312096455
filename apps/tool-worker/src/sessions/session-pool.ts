import type { FetchLike } from '@modelcontextprotocol/client';
import type { ServerConfig, SessionStatus } from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import { ManagedSession } from './managed-session.ts';

/** The worker's warm sessions, one per served server, opened in parallel at start-up. */
export class SessionPool {
  readonly sessions: Map<string, ManagedSession>;

  constructor(
    servers: Record<string, ServerConfig>,
    log: Logger,
    fetchFor: (server: string) => FetchLike | undefined = () => undefined,
  ) {
    this.sessions = new Map(
      Object.entries(servers).map(([name, config]) => [
        name,
        new ManagedSession(name, config, log, fetchFor(name)),
      ]),
    );
  }

  get(server: string): ManagedSession | undefined {
    return this.sessions.get(server);
  }

  /** Resolves when every first connect has settled; failed ones keep reconnecting in the background. */
  async open(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.open()));
  }

  statuses(): Record<string, SessionStatus> {
    return Object.fromEntries([...this.sessions].map(([name, session]) => [name, session.snapshot()]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.close()));
  }
}
