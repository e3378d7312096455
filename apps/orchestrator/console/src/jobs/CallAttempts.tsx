import type { ToolCall } from '../api/types.ts';
import { formatMs } from '../format.ts';

const time = (iso: string | null) => (iso ? new Date(iso).toLocaleTimeString() : '—');

/**
 * Every attempt of every call, oldest first: which worker took it, when it was picked up, sent and
 * ended, and why it failed (a failed attempt followed by another is a retry). Calls no worker took
 * yet have none and are left out.
 */
export function CallAttempts({ calls }: { calls: ToolCall[] }) {
  const rows = calls.flatMap((call) => call.attempts.map((attempt) => ({ call, attempt })));
  if (rows.length === 0) return null;
  return (
    <>
      <h2>Attempts</h2>
      <table className="grid" data-testid="attempt-table">
        <thead>
          <tr>
            <th>call</th>
            <th>tool</th>
            <th>#</th>
            <th>worker</th>
            <th>picked up</th>
            <th>sent</th>
            <th>ended</th>
            <th>took</th>
            <th>error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ call, attempt }) => (
            <tr
              key={`${call.id}:${attempt.attempt}`}
              data-testid="attempt-row"
              data-call-id={call.id}
              data-attempt={attempt.attempt}
            >
              <td>
                <code>{call.id}</code>
              </td>
              <td>{call.tool}</td>
              <td>{attempt.attempt}</td>
              <td data-testid="attempt-worker">{attempt.workerId ?? '—'}</td>
              <td>{time(attempt.pickedUpAt)}</td>
              <td>{attempt.startedAt ? time(attempt.startedAt) : 'never sent'}</td>
              <td>{time(attempt.finishedAt)}</td>
              <td>{formatMs(Date.parse(attempt.finishedAt) - Date.parse(attempt.pickedUpAt))}</td>
              <td className="error" data-testid="attempt-error">
                {attempt.error ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
