import type { StdioAuth, StdioServerConfig } from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import { ManagedSession } from '../sessions/managed-session.ts';
import { CredentialError } from './credential-error.ts';

interface TeamSession {
  session: Promise<ManagedSession>;
  calls: number;
  lastUsed: number;
}

/**
 * A stdio server's per-team sessions (servers.<name>.auth): a team with secrets runs its calls in its own
 * child process, started with the team's environment on its first call — never in a process that holds
 * another team's secrets. Bounded per worker (`maxSessions`: the least recently used idle one is closed to
 * make room) and closed after `idleCloseMs` without calls.
 */
export class TeamSessions {
  private readonly sessions = new Map<string, TeamSession>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly server: string,
    private readonly config: StdioServerConfig,
    private readonly auth: StdioAuth,
    private readonly log: Logger,
  ) {
    this.sweeper = setInterval(() => void this.closeIdle(), Math.min(auth.idleCloseMs, 60_000));
    this.sweeper.unref();
  }

  /** Throws CredentialError('missing') when `team` has no secrets here and there is no default. */
  check(team: string | undefined): void {
    if (!this.envOf(team)) throw new CredentialError('missing', this.server, team);
  }

  /** Runs `call` on the team's session, opening it first if needed; the session is not closed meanwhile. */
  async run<T>(team: string | undefined, call: (session: ManagedSession) => Promise<T>): Promise<T> {
    const key = team ?? '';
    let entry = this.sessions.get(key);
    if (!entry) {
      await this.makeRoom();
      entry = { session: this.open(team), calls: 0, lastUsed: Date.now() };
      this.sessions.set(key, entry);
    }
    entry.calls += 1;
    entry.lastUsed = Date.now();
    try {
      const session = await entry.session;
      return await call(session);
    } finally {
      entry.calls -= 1;
      entry.lastUsed = Date.now();
    }
  }

  get size(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((key) => this.closeOne(key, 'worker stopping')));
  }

  private envOf(team: string | undefined): Record<string, string> | undefined {
    return (team === undefined ? undefined : this.auth.teams[team]?.env) ?? this.auth.default?.env;
  }

  private async open(team: string | undefined): Promise<ManagedSession> {
    const env = this.envOf(team);
    if (!env || this.closed) throw new CredentialError('missing', this.server, team);
    const log = this.log.child({ team });
    const session = new ManagedSession(
      this.server,
      { ...this.config, env: { ...this.config.env, ...env } },
      log,
    );
    await session.open();
    if (session.state !== 'ready') {
      // It would keep reconnecting with the same secrets: give up on it, and let the next call try afresh.
      const reason = session.snapshot().lastError ?? session.state;
      this.sessions.delete(team ?? '');
      await session.close();
      throw new CredentialError('unstartable', this.server, team, reason);
    }
    log.info({ server: this.server, pid: session.snapshot().pid }, 'team session opened');
    return session;
  }

  private async makeRoom(): Promise<void> {
    if (this.sessions.size < this.auth.maxSessions) return;
    const idle = [...this.sessions].filter(([, entry]) => entry.calls === 0);
    idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    // Every session busy: this worker's calls in flight are bounded by the server's concurrency, so the
    // excess is temporary and closes once idle.
    if (oldest) await this.closeOne(oldest[0], 'session limit reached');
  }

  private async closeIdle(): Promise<void> {
    const cutoff = Date.now() - this.auth.idleCloseMs;
    const idle = [...this.sessions].filter(([, entry]) => entry.calls === 0 && entry.lastUsed < cutoff);
    await Promise.all(idle.map(([key]) => this.closeOne(key, 'idle')));
  }

  private async closeOne(key: string, reason: string): Promise<void> {
    const entry = this.sessions.get(key);
    if (!entry) return;
    this.sessions.delete(key);
    const session = await entry.session.catch(() => undefined);
    if (!session) return;
    await session.close();
    this.log.info({ server: this.server, team: key || undefined, reason }, 'team session closed');
  }
}
