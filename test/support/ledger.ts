import { watch } from 'node:fs';
import { dirname } from 'node:path';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';

/** Ledgers are written by another process: wait for the row that proves the event happened. */
export async function waitForLedger(
  path: string,
  done: (rows: Array<Record<string, unknown>>) => boolean,
  timeoutMs = 10_000,
): Promise<Array<Record<string, unknown>>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const rows = readLedger(path);
      if (done(rows)) {
        finish();
        resolve(rows);
      }
    };
    const watcher = watch(dirname(path), check);
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`ledger ${path} did not reach the expected state in ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      watcher.close();
    };
    check();
  });
}
