/**
 * What failed in a pass, in a few lines for the end of `npm test -w test`. CI keeps only the tail of a
 * run's output, and a pass's own "Failed Tests" block scrolls out of it behind the passes that follow:
 * run-passes.ts has each pass's vitest also write its JSON report, and prints these lines last.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { z } from 'zod';

// The part of vitest's JSON reporter output (JsonTestResults) these lines read.
const jsonReport = z.object({
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      message: z.string().optional(),
      assertionResults: z.array(
        z.object({
          fullName: z.string(),
          status: z.string(),
          failureMessages: z.array(z.string()).nullish(),
        }),
      ),
    }),
  ),
});

const MAX_LINES = 20;
const MAX_REASON = 400;

/** The first line of an error that says something (vitest prefixes assertion errors with their class). */
function reason(message: string | undefined): string {
  const line =
    message
      ?.split('\n')
      .map((part) => part.trim())
      .find((part) => part.length > 0) ?? 'no message';
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON)}…` : line;
}

/** One line per failed test (or file that failed outside a test, e.g. in a hook), at most MAX_LINES. */
export async function passFailures(reportFile: string, root: string): Promise<string[]> {
  let report: z.infer<typeof jsonReport>;
  try {
    report = jsonReport.parse(JSON.parse(await readFile(reportFile, 'utf8')));
  } catch (error) {
    return [
      `(no JSON report to list failures from: ${error instanceof Error ? error.message : String(error)})`,
    ];
  }
  const lines: string[] = [];
  for (const file of report.testResults) {
    const name = relative(root, file.name);
    const failed = file.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failed) lines.push(`${name} > ${test.fullName}: ${reason(test.failureMessages?.[0])}`);
    if (failed.length === 0 && file.status === 'failed') lines.push(`${name}: ${reason(file.message)}`);
  }
  if (lines.length <= MAX_LINES) return lines;
  return [...lines.slice(0, MAX_LINES), `… and ${lines.length - MAX_LINES} more`];
}
