import type { ServerList, ToolList } from '@switchyard/client';
import { table } from '../output/table.ts';

export function toolsTable(list: ToolList): string {
  const rows = table(
    list.tools.map((tool) => ({
      name: tool.name,
      availability: tool.availability,
      idempotent: tool.idempotent ? 'yes' : 'no',
      description: tool.description.replace(/\s+/g, ' ').slice(0, 70),
    })),
  );
  return list.errors.length > 0 ? `${rows}\n\nleft out: ${list.errors.join('; ')}` : rows;
}

export function serversTable(list: ServerList): string {
  return table(
    list.servers.map((server) => ({
      name: server.name,
      transport: server.transport,
      availability: server.availability,
      tools: server.tools,
      concurrency: server.concurrency,
      sessions: sessionCounts(server.sessions),
      queue: server.queue ? pairs(server.queue) : undefined,
    })),
  );
}

/** A team sees counts by state; an operator every session (counted here by state). */
function sessionCounts(sessions: ServerList['servers'][number]['sessions']): string {
  if (!Array.isArray(sessions)) return pairs(sessions);
  const counts: Record<string, number> = {};
  for (const session of sessions) counts[session.state] = (counts[session.state] ?? 0) + 1;
  return pairs(counts);
}

const pairs = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
