import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type LedgerRecord = Record<string, unknown>;

/**
 * Appends one JSON line to a ledger file. Ledgers are files (not memory) because several
 * processes may run the same server at once (one stdio child per worker), and tests need
 * to see what every one of them did. A single appendFileSync of one short line is one
 * O_APPEND write, so concurrent writers do not interleave within a line.
 */
export function appendLedger(path: string | undefined, record: object): void {
  if (!path) return;
  const line = `${JSON.stringify({ ...record, pid: process.pid, time: new Date().toISOString() })}\n`;
  try {
    appendFileSync(path, line);
  } catch (error) {
    if (!isNodeError(error) || error.code !== 'ENOENT') throw error;
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, line);
  }
}

/**
 * Reads every record of a ledger, oldest first; a missing file is an empty ledger.
 * A line that does not parse (a writer killed mid-write) is skipped rather than failing
 * the reader, since the ledger is evidence to inspect, not a source of truth to repair.
 */
export function readLedger(path: string): LedgerRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isNodeError(error) && error.code === 'ENOENT') return [];
    throw error;
  }
  const records: LedgerRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const parsed = tryParse(line);
    if (isRecord(parsed)) records.push(parsed);
  }
  return records;
}

function tryParse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is LedgerRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
