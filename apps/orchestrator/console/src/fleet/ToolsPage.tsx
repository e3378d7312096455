import { useQuery } from '@tanstack/react-query';
import { switchyard } from '../api/switchyard.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { StatusChip } from '../StatusChip.tsx';

/** The tools this key may call (`GET /v1/tools`): availability and whether a retry is safe. */
export function ToolsPage() {
  const tools = useQuery({
    queryKey: ['tools'],
    queryFn: () => switchyard().listTools(),
    refetchInterval: 10_000,
  });
  return (
    <section>
      <h1>Tools</h1>
      {tools.error && <ErrorNote error={tools.error} />}
      {tools.data?.errors.map((error) => (
        <p key={error} className="error">
          {error}
        </p>
      ))}
      <table className="grid" data-testid="tool-list">
        <thead>
          <tr>
            <th>tool</th>
            <th>server</th>
            <th>availability</th>
            <th>idempotent</th>
            <th>description</th>
          </tr>
        </thead>
        <tbody>
          {tools.data?.tools.map((tool) => (
            <tr key={tool.name} data-testid="tool-row" data-tool={tool.name}>
              <td>
                <code>{tool.name}</code>
              </td>
              <td>{tool.server}</td>
              <td>
                <StatusChip status={tool.availability} />
              </td>
              <td>{tool.idempotent ? 'yes' : 'no'}</td>
              <td className="muted">{tool.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
