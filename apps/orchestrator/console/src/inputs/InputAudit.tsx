import type { PendingInput } from '../api/types.ts';

/** What a person decided, in words: an approval's decision (with its reason), a question's answer. */
function decisionText(entry: PendingInput): string {
  if (entry.state === 'expired') return 'nobody answered before it expired';
  const answer = entry.answer ?? {};
  if (typeof answer.decision === 'string') {
    const decided = answer.decision === 'approve' ? 'approved' : 'denied';
    return typeof answer.reason === 'string' && answer.reason ? `${decided}: ${answer.reason}` : decided;
  }
  const action = typeof answer.action === 'string' ? answer.action : 'answered';
  const verb = action === 'accept' ? 'answered' : action === 'decline' ? 'declined' : 'cancelled';
  return answer.content ? `${verb} ${JSON.stringify(answer.content)}` : verb;
}

/**
 * The job's audit trail of people in the loop (`audit` of the job view): each approval decision and
 * answer to a tool's question — which call, what was decided, by which key, when — oldest first.
 */
export function InputAudit({ entries }: { entries: PendingInput[] }) {
  if (entries.length === 0) return null;
  const sorted = [...entries].sort((a, b) => Date.parse(a.askedAt) - Date.parse(b.askedAt));
  return (
    <>
      <h2>Approvals and answers</h2>
      <table className="grid" data-testid="audit-table">
        <thead>
          <tr>
            <th>call</th>
            <th>tool</th>
            <th>asked</th>
            <th>what</th>
            <th>decision</th>
            <th>by</th>
            <th>when</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((entry) => (
            <tr
              key={`${entry.kind}:${entry.toolCallId}:${entry.askedAt}`}
              data-testid="audit-row"
              data-call-id={entry.toolCallId}
              data-kind={entry.kind}
            >
              <td>
                <code>{entry.toolCallId}</code>
              </td>
              <td>
                {entry.server}__{entry.tool}
              </td>
              <td>{new Date(entry.askedAt).toLocaleString()}</td>
              <td>{entry.kind === 'approval' ? 'approval' : 'question'}</td>
              <td data-testid="audit-decision">{decisionText(entry)}</td>
              <td data-testid="audit-by">{entry.decidedBy ?? '—'}</td>
              <td data-testid="audit-at">
                {entry.decidedAt ? new Date(entry.decidedAt).toLocaleString() : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
