/** Rows as aligned columns under a header; cells are text, empty values shown as "-". */
export function table(rows: Array<Record<string, string | number | null | undefined>>): string {
  if (rows.length === 0) return '(none)';
  const columns = Object.keys(rows[0] ?? {});
  const cell = (value: string | number | null | undefined) =>
    value === null || value === undefined || value === '' ? '-' : String(value);
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => cell(row[column]).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((text, index) => text.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line(columns),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map((row) => line(columns.map((column) => cell(row[column])))),
  ].join('\n');
}
