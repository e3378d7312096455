import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { strayRows } from '../support/markdown-tables.ts';
import { REPO_ROOT } from '../support/paths.ts';

/** README.md, every page of docs/ and the published packages' READMEs, as GitHub and npm render them. */
const PAGES = [
  'README.md',
  'libs/client/README.md',
  'apps/cli/README.md',
  ...readdirSync(join(REPO_ROOT, 'docs')).map((name) => join('docs', name)),
].filter((path) => path.endsWith('.md'));

describe('the tables of the READMEs and docs/', () => {
  it.each(PAGES)('%s: every row is in a table with its header’s cells', (page) => {
    expect(strayRows(readFileSync(join(REPO_ROOT, page), 'utf8'))).toEqual([]);
  });

  it('finds a row left outside its table and a row with a cell too many', () => {
    const table = '| key | meaning |\n| --- | --- |\n| `a` | one |';
    expect(strayRows(`${table}\n\nA paragraph.\n| \`auth\` | two |`)).toEqual(['line 6: | `auth` | two |']);
    expect(strayRows(`${table}\n| \`b\` | x | y |`)).toEqual(['line 4: | `b` | x | y |']);
    expect(strayRows(`${table}\n| \`c\` | a \\| b |`)).toEqual([]);
  });
});
