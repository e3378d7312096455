import { suiteDatabase } from './suite-database.ts';

/**
 * vitest globalSetup of the system-test runs (and of a unit project whose database is missing): when
 * DATABASE_URL is unset and nothing answers on 127.0.0.1:5432, one embedded PostgreSQL for the run.
 * Set before the test workers exist, DATABASE_URL reaches every suite and every app it starts.
 */
export default async function startSuiteDatabase(): Promise<() => Promise<void>> {
  const database = await suiteDatabase();
  if (database.started) {
    console.log(`tests: using ${database.description}`);
    process.env.DATABASE_URL = database.url;
  }
  return database.stop;
}
