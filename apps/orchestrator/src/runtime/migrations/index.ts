import type { Migration } from 'kysely/migration';
import * as initialSchema from './0001-initial-schema.ts';
import * as peopleInTheLoop from './0002-people-in-the-loop.ts';
import * as mcpJobKind from './0003-mcp-job-kind.ts';
import * as jobApi from './0004-job-api.ts';
import * as redisEpoch from './0005-redis-epoch.ts';
import * as jobsCreated from './0006-jobs-created.ts';

/**
 * Every migration, by version name, imported rather than found by scanning a folder so that the
 * compiled build carries them like any other module. Names sort in the order they apply; append only.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial_schema': initialSchema,
  '0002_people_in_the_loop': peopleInTheLoop,
  '0003_mcp_job_kind': mcpJobKind,
  '0004_job_api': jobApi,
  '0005_redis_epoch': redisEpoch,
  '0006_jobs_created': jobsCreated,
};
