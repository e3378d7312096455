import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/provider-loading.ts');

// A replica loads a model provider's package (tens of MiB each, docs/capacity.md) only for a job that
// names it; checking a job's model at submit time loads none.
it('loads a provider package only when a model of that provider is built', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@switchyard/source', '--import', 'tsx', FIXTURE],
    { cwd: import.meta.dirname, timeout: 60_000 },
  );
  expect(JSON.parse(stdout)).toEqual({
    imported: [],
    checkedAndScripted: [],
    anthropicBuilt: ['@langchain/anthropic'],
  });
});
