/**
 * Writes the orchestrator's OpenAPI document, built from the zod schemas that validate the API, to the
 * file named by the first argument. `npm run generate -w libs/client` keeps libs/client/openapi.json (and
 * the types generated from it) in step with the API; test/e2e/client-document.test.ts fails when the
 * committed copy is stale. The lib cannot import the orchestrator (libs never import apps): this script may.
 */
import { writeFileSync } from 'node:fs';
import { API_VERSION, openApiDocument } from '@switchyard/orchestrator/api-docs';

const [target] = process.argv.slice(2);
if (!target) {
  console.error('usage: client-openapi.ts <file to write the OpenAPI document to>');
  process.exit(2);
}
writeFileSync(target, `${JSON.stringify(openApiDocument(API_VERSION), null, 2)}\n`);
console.log(`wrote ${target}`);
