import type { ToolCallOutcome } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import type { TestProcess } from '../support/processes.ts';

/**
 * A stdio server that needs per-team secrets (servers.<name>.auth on stdio): each team's calls run in its
 * own child process started with that team's environment, opened on first use, bounded, closed when idle.
 */
describe('per-team stdio sessions', () => {
  let fleet: Fleet;
  let worker: TestProcess;
  let dispatcher: ToolCallDispatcher;
  let call = 0;

  const whoami = (team: string | undefined, label: string, server = 'local'): Promise<ToolCallOutcome> =>
    dispatcher.dispatch({
      jobId: 'team-sessions',
      toolCallId: `call-${++call}`,
      server,
      tool: 'whoami',
      arguments: { label },
      ...(team ? { team } : {}),
    });
  const pidOf = (outcome: ToolCallOutcome) => outcome.structuredContent?.pid;
  const closed = (server: string, team: string, reason: string) =>
    worker.waitFor(
      (log) =>
        log.msg === 'team session closed' &&
        log.server === server &&
        log.team === team &&
        log.reason === reason,
      `${team}'s session to close (${reason})`,
      60_000,
    );

  beforeAll(async () => {
    const teams = {
      'team-a': { env: { TEAM_IDENTITY: 'team-a' } },
      'team-b': { env: { TEAM_IDENTITY: 'team-b' } },
      'team-c': { env: { TEAM_IDENTITY: 'team-c' } },
      'team-x': { env: { TEAM_IDENTITY: 'broken' } },
    };
    fleet = new Fleet('team-sessions', (dir) => ({
      // At most two team processes; none closes for idleness during the suite.
      local: exampleServer('team-env', {
        env: { TEAM_ENV_LEDGER: `${dir}/team-env.jsonl` },
        concurrency: 4,
        auth: { teams, maxSessions: 2, idleCloseMs: 600_000 },
      }),
      // Team processes close after one idle second.
      brief: exampleServer('team-env', { auth: { teams, idleCloseMs: 1_000 } }),
    }));
    worker = await fleet.startWorker();
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('runs each team in its own process with its own secrets, reused while in use', async () => {
    const outcomes = await Promise.all([
      ...['a-0', 'a-1', 'a-2'].map((label) => whoami('team-a', label)),
      ...['b-0', 'b-1', 'b-2'].map((label) => whoami('team-b', label)),
    ]);
    expect(outcomes.map((outcome) => [outcome.status, outcome.structuredContent?.identity])).toEqual([
      ...Array(3).fill(['ok', 'team-a']),
      ...Array(3).fill(['ok', 'team-b']),
    ]);
    const aPids = new Set(outcomes.slice(0, 3).map(pidOf));
    const bPids = new Set(outcomes.slice(3).map(pidOf));
    expect(aPids.size).toBe(1);
    expect(bPids.size).toBe(1);
    expect([...aPids][0]).not.toBe([...bPids][0]);
    // Neither is the shared session's process, which holds no team's secrets.
    const shared = worker.logs.find((log) => log.msg === 'tool worker started') as
      | { sessions: { local: { pid: number } } }
      | undefined;
    expect(aPids.has(shared?.sessions.local.pid)).toBe(false);
  });

  it('ends a call of a team without secrets, or whose server does not start, failed / executed no', async () => {
    const missing = await whoami('team-z', 'z-0');
    expect(missing).toMatchObject({ status: 'failed', executed: 'no', attempts: 0 });
    expect(missing.text).toContain('Team team-z has no credential for server local');
    const broken = await whoami('team-x', 'x-0');
    expect(broken).toMatchObject({ status: 'failed', executed: 'no', attempts: 0 });
    expect(broken.text).toContain("Server local did not start with team team-x's credential");
  });

  it('closes the least recently used idle session past maxSessions', async () => {
    const [a, b] = [await whoami('team-a', 'a-3'), await whoami('team-b', 'b-3')];
    // A third team: the least recently used of the two open sessions (team-a's) makes room.
    const c = await whoami('team-c', 'c-0');
    await closed('local', 'team-a', 'session limit reached');
    expect([a.status, b.status, c.status]).toEqual(['ok', 'ok', 'ok']);
    expect(c.structuredContent?.identity).toBe('team-c');
    // team-b's process was kept: the same pid serves it.
    expect(pidOf(await whoami('team-b', 'b-4'))).toBe(pidOf(b));
  });

  it('closes a session left idle; the next call starts a fresh process', async () => {
    const first = await whoami('team-c', 'brief-0', 'brief');
    expect(first).toMatchObject({ status: 'ok', structuredContent: { identity: 'team-c' } });
    await closed('brief', 'team-c', 'idle');
    const again = await whoami('team-c', 'brief-1', 'brief');
    expect(again).toMatchObject({ status: 'ok', structuredContent: { identity: 'team-c' } });
    expect(pidOf(again)).not.toBe(pidOf(first));
  });
});
