import type { ToolCall } from '@switchyard/client';

/** One line per tool call: what ran where, how it ended, and how long it queued and ran. */
export function printToolCalls(title: string, calls: ToolCall[]): void {
  const rows = calls.map((call) => ({
    call: call.id,
    tool: call.tool,
    server: call.server ?? '-',
    status: call.outcome?.status ?? '(none)',
    executed: call.outcome?.executed ?? '-',
    attempts: String(call.outcome?.attempts ?? '-'),
    worker: call.workerId ?? '-',
    'queued ms': String(Math.round(call.outcome?.queuedMs ?? 0)),
    'run ms': String(Math.round(call.outcome?.runMs ?? 0)),
  }));
  const columns = Object.keys(rows[0] ?? {}) as Array<keyof (typeof rows)[number]>;
  const width = (column: (typeof columns)[number]) =>
    Math.max(column.length, ...rows.map((row) => row[column].length));
  const line = (cells: Record<string, string>) =>
    columns.map((column) => (cells[column] ?? '').padEnd(width(column))).join('  ');
  console.log(`\n${title}`);
  console.log(line(Object.fromEntries(columns.map((column) => [column, column]))));
  console.log(columns.map((column) => '-'.repeat(width(column))).join('  '));
  for (const row of rows) console.log(line(row));
}
