import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { API_VERSION, openApiDocument } from '@switchyard/orchestrator/api-docs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.ts';

/**
 * The CI guard of the typed client (libs/client): it is generated from a committed copy of the API's
 * OpenAPI document, so an API change without `npm run generate -w libs/client` must fail here. The
 * other half of the guard is the lib's typecheck, which compiles the client against the generated types.
 */
const CLIENT = resolve(REPO_ROOT, 'libs/client');
const REGENERATE = 'libs/client is stale: run npm run generate -w libs/client (and commit the result)';

describe('the typed client is generated from the current API', () => {
  it('libs/client/openapi.json is the document the orchestrator builds now', () => {
    const committed: unknown = JSON.parse(readFileSync(resolve(CLIENT, 'openapi.json'), 'utf8'));
    const current: unknown = JSON.parse(JSON.stringify(openApiDocument(API_VERSION)));
    expect(committed, REGENERATE).toEqual(current);
  });

  it('libs/client/src/schema.ts is what openapi-typescript generates from that document', () => {
    // The same generator and flags as `npm run generate` (the lib's own openapi-typescript).
    const generated = execFileSync(
      process.execPath,
      [
        resolve(CLIENT, 'node_modules/openapi-typescript/bin/cli.js'),
        'openapi.json',
        '--default-non-nullable',
        'false',
      ],
      { cwd: CLIENT, encoding: 'utf8' },
    );
    expect(readFileSync(resolve(CLIENT, 'src/schema.ts'), 'utf8'), REGENERATE).toBe(generated);
  });
});
