import { useQuery } from '@tanstack/react-query';
import { switchyard } from '../api/switchyard.ts';
import type { Server, Session } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { formatMs } from '../format.ts';
import { StatusChip } from '../StatusChip.tsx';

/**
 * The MCP servers (`GET /v1/servers`): availability, negotiated MCP revisions, timeouts, sessions.
 * With an operator key the API adds every worker session (with its last error) and queue depths.
 */
export function ServersPage() {
  const servers = useQuery({
    queryKey: ['servers'],
    queryFn: () => switchyard().listServers(),
    refetchInterval: 5_000,
  });
  return (
    <section>
      <h1>Servers</h1>
      {servers.error && <ErrorNote error={servers.error} />}
      {servers.data?.servers.map((server) => (
        <article key={server.name} className="server" data-testid="server" data-server={server.name}>
          <h2>
            {server.name} <StatusChip status={server.availability} />
          </h2>
          <dl className="facts">
            <dt>transport</dt>
            <dd>{server.transport}</dd>
            <dt>MCP server</dt>
            <dd>{server.serverInfo ? `${server.serverInfo.name} ${server.serverInfo.version}` : '—'}</dd>
            <dt>revision</dt>
            <dd data-testid="protocol-versions">{revisions(server)}</dd>
            <dt>concurrency</dt>
            <dd>{server.concurrency}</dd>
            <dt>tools</dt>
            <dd>{server.tools}</dd>
            {server.timeouts !== undefined && (
              <>
                <dt>timeouts</dt>
                <dd data-testid="timeouts">{timeouts(server.timeouts)}</dd>
              </>
            )}
            {server.queue && (
              <>
                <dt>queue</dt>
                <dd data-testid="queue-depth">
                  {Object.entries(server.queue)
                    .map(([state, count]) => `${state} ${count}`)
                    .join(' · ')}
                </dd>
              </>
            )}
          </dl>
          <Sessions sessions={server.sessions} />
        </article>
      ))}
    </section>
  );
}

/** A server's per-attempt timeouts (`timeouts` of /v1/servers): what the next call gets, and the cap. */
function timeouts(value: unknown): string {
  const view = value as {
    mode?: string;
    maxTimeoutMs?: number;
    server?: { timeoutMs?: number; basis?: string; p95Ms?: number; samples?: number };
  };
  if (!view?.server?.timeoutMs) return JSON.stringify(value);
  const p95 =
    view.server.p95Ms === undefined
      ? ''
      : `, P95 ${formatMs(view.server.p95Ms)} of ${view.server.samples} calls`;
  return `${view.mode}: ${formatMs(view.server.timeoutMs)} (${view.server.basis}${p95}), at most ${formatMs(view.maxTimeoutMs ?? null)}`;
}

/** The MCP revisions the server's sessions negotiated (`protocolVersions`, newer than the generated client). */
function revisions(server: Server): string {
  const versions = server.protocolVersions;
  return Array.isArray(versions) && versions.length > 0 ? versions.join(', ') : '—';
}

function Sessions({ sessions }: { sessions: Server['sessions'] }) {
  if (!Array.isArray(sessions))
    return (
      <p data-testid="session-counts">
        sessions:{' '}
        {Object.entries(sessions)
          .map(([state, count]) => `${count} ${state}`)
          .join(', ') || 'none'}
      </p>
    );
  return (
    <table className="grid" data-testid="sessions">
      <thead>
        <tr>
          <th>worker</th>
          <th>state</th>
          <th>since</th>
          <th>connects</th>
          <th>revision</th>
          <th>last error</th>
        </tr>
      </thead>
      <tbody>
        {(sessions as Session[]).map((session) => (
          <tr key={session.workerId} data-testid="session" data-worker={session.workerId}>
            <td>{session.workerId}</td>
            <td>
              <StatusChip status={session.state} />
            </td>
            <td>{session.since}</td>
            <td>{session.connects}</td>
            <td>{session.protocolVersion ?? '—'}</td>
            <td className="muted">{session.lastError ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
