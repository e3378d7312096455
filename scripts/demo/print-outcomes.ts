import type { ToolCallOutcome } from '@switchyard/contracts';

/** One line per tool call: what ran where, how it ended, and how long it queued and ran. */
export function printOutcomes(title: string, outcomes: ToolCallOutcome[]): void {
  const rows = outcomes.map((outcome) => ({
    call: outcome.toolCallId,
    tool: `${outcome.server}__${outcome.tool}`,
    status: outcome.status,
    executed: outcome.executed,
    attempts: String(outcome.attempts),
    worker: outcome.workerId ?? '-',
    'queued ms': String(Math.round(outcome.queuedMs)),
    'run ms': String(Math.round(outcome.runMs)),
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
