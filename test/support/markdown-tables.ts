/** Cells of a table row: GFM splits on every `|` not escaped as `\|`, inside code spans too. */
const cells = (line: string) => line.split(/(?<!\\)\|/).length - 2;

/**
 * Rows that are not part of a well-formed table: a `| … |` line that starts no table (no header and
 * separator) and follows no row renders as text, as the `auth` row of docs/configuration.md once did
 * after a paragraph; a row with another cell count than its header is cut or padded.
 */
export function strayRows(text: string): string[] {
  const lines = text.split('\n');
  const stray: string[] = [];
  let width: number | undefined;
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || !line.startsWith('|')) {
      width = undefined;
      return;
    }
    const next = lines[index + 1] ?? '';
    if (width === undefined && /^\|[\s:|-]+\|$/.test(next)) width = cells(line);
    else if (width === undefined || cells(line) !== width)
      stray.push(`line ${index + 1}: ${line.slice(0, 80)}`);
  });
  return stray;
}
