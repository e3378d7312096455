import type { Migration } from 'kysely/migration';
import * as initialSchema from './0001-initial-schema.ts';

/**
 * Every migration, by version name, imported rather than found by scanning a folder so that the
 * compiled build carries them like any other module. Names sort in the order they apply; append only.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial_schema': initialSchema,
};
