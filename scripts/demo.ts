/**
 * `npm run demo`: the main job on local defaults. Picks the backend (scripts/demo/local-stores.ts: Redis when
 * one answers, else PostgreSQL alone, embedded when none answers) and finds or starts its stores, starts the
 * compiled orchestrator and two compiled tool workers (`npm run demo` builds first) on the example MCP
 * servers of switchyard.yaml, submits a batch job and an agent job over HTTP, prints every tool call's
 * server, outcome, attempts and timings, and stops everything it started (also on failure and Ctrl-C).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createSwitchyardClient, type JobRequest } from '@switchyard/client';
import { configPathFromEnv, loadConfig, queueSchemaName } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ensureLocalStores, type LocalStores } from './demo/local-stores.ts';
import { printToolCalls } from './demo/print-outcomes.ts';
import { Teardown } from './demo/teardown.ts';
import { type StartedProcess, startNodeProcess } from './demo/worker-processes.ts';

const ROOT = resolve(import.meta.dirname, '..');
const LOG_DIR = resolve(ROOT, '.switchyard');

const BATCH: JobRequest = {
  kind: 'batch',
  calls: [
    { tool: 'search__search', arguments: { query: 'serialized queue', limit: 3 } },
    { tool: 'search__get_document', arguments: { id: 'no-such-document' } },
    { tool: 'notes__add_note', arguments: { text: 'written exactly once' } },
    { tool: 'notes__add_note', arguments: { text: 42 } },
    { tool: 'slow__sleep', arguments: { ms: 500, progressEveryMs: 100 } },
    ...Array.from({ length: 5 }, (_, index) => ({
      tool: 'recorder__record',
      arguments: { ms: 40, label: `serial-${index}` },
    })),
  ],
};

/** The scripted model, unless a real provider is configured (SWITCHYARD_MODEL_PROVIDER / _NAME). */
function agentJob(): JobRequest {
  const input = 'Find what the docs say about tracing and save a note summarising it.';
  if (process.env.SWITCHYARD_MODEL_PROVIDER) return { kind: 'agent', input, limits: { maxSteps: 8 } };
  return {
    kind: 'agent',
    input,
    model: {
      provider: 'scripted',
      script: [
        {
          toolCalls: [
            { tool: 'search__search', arguments: { query: 'tracing' } },
            { tool: 'recorder__record', arguments: { ms: 200, label: 'in parallel with the search' } },
          ],
        },
        {
          toolCalls: [
            {
              tool: 'notes__add_note',
              arguments: { text: 'Tracing: one trace per job, W3C context in _meta.' },
            },
          ],
        },
        { final: 'I searched the docs for tracing and saved a note with the summary.' },
      ],
    },
  };
}

async function main(): Promise<void> {
  process.chdir(ROOT);
  console.log(`Node.js:    ${process.version} (${process.execPath})`);
  const configPath = configPathFromEnv();
  // The shipped config has no default key; the demo's processes share a random one of their own.
  const demoKey = `demo-${randomBytes(24).toString('base64url')}`;
  const config = loadConfig(configPath, { ...process.env, SWITCHYARD_DEMO_KEY: demoKey });
  const [team, teamConfig] = Object.entries(config.teams)[0] ?? [];
  const apiKey = teamConfig?.apiKeys[0];
  if (!team || !apiKey)
    throw new Error(`${configPath} defines no team with an API key; the demo submits jobs as one`);

  const teardown = new Teardown();
  // Ctrl-C: stop what was started (the embedded PostgreSQL runs in its own process group), exit 130.
  teardown.exitOnSignal(130, (signal) => console.log(`${signal}: stopping everything the demo started`));
  const processes: StartedProcess[] = [];
  const prefix = `switchyard-demo-${randomUUID().slice(0, 8)}`;
  const schema = `switchyard_demo_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  try {
    const stores = await ensureLocalStores(LOG_DIR, (what, stop) => teardown.add(what, stop));
    for (const line of stores.lines) console.log(line);
    console.log(
      `${'Schemas:'.padEnd(12)}${schema} (jobs)${stores.backend === 'postgres' ? `, ${queueSchemaName(prefix)} (queues)` : ''}`,
    );
    const postgres = stores.postgres;
    teardown.add('the demo schemas', () => dropDemoState(stores, schema, prefix));
    teardown.add('the orchestrator and workers', async () => {
      await Promise.all(processes.map((started) => started.stop()));
    });

    const common = {
      ...stores.env,
      SWITCHYARD_CONFIG: configPath,
      SWITCHYARD_PREFIX: prefix,
      SWITCHYARD_DEMO_KEY: demoKey,
    };
    for (const id of ['demo-worker-1', 'demo-worker-2']) {
      processes.push(
        startNodeProcess(
          id,
          'apps/tool-worker/dist/main.js',
          { ...common, WORKER_ID: id, WORKER_HTTP_PORT: '0' },
          LOG_DIR,
        ),
      );
    }
    const orchestrator = startNodeProcess(
      'demo-orchestrator',
      'apps/orchestrator/dist/main.js',
      {
        ...common,
        DATABASE_URL: postgres.url,
        DATABASE_SCHEMA: schema,
        PORT: process.env.PORT ?? '0',
        HOST: '127.0.0.1',
        REPLICA_ID: 'demo-orchestrator',
      },
      LOG_DIR,
    );
    processes.push(orchestrator);
    const [listening] = await Promise.all([
      orchestrator.waitForLog((log) => log.msg === 'orchestrator listening', 'start-up'),
      ...processes
        .slice(0, 2)
        .map((worker) => worker.waitForLog((log) => log.msg === 'tool worker started', 'start-up')),
    ]);
    const baseUrl = `http://127.0.0.1:${listening.port}`;
    console.log(
      `Orchestrator: ${baseUrl} (API reference at ${baseUrl}/docs); workers: demo-worker-1, demo-worker-2`,
    );
    console.log(`Logs: ${LOG_DIR}/`);

    const client = createSwitchyardClient({ url: baseUrl, apiKey });
    const started = Date.now();
    const jobs = await Promise.all([client.submitJob(BATCH), client.submitJob(agentJob())]);
    // Each job's event stream (resumed with Last-Event-ID if it drops) until its final status.
    await Promise.all(
      jobs.map(async (job) => {
        for await (const event of client.followJob(job.id))
          if (event.event === 'status') console.log(`  ${job.id}: ${event.data.status}`);
      }),
    );
    console.log(`Both jobs finished in ${Date.now() - started} ms.`);
    for (const { id } of jobs) {
      const job = await client.getJob(id);
      printToolCalls(`${job.kind} job ${job.id}: ${job.status} (trace ${job.traceId})`, job.toolCalls);
      if (job.kind === 'agent') console.log(`\nAnswer: ${job.result ?? job.error}`);
      else console.log(`\nResult: ${JSON.stringify(job.result)}`);
      // The batch fails two calls on purpose (a missing document, a bad argument): it completes with errors.
      const expected = job.kind === 'batch' ? 'completed_with_errors' : 'succeeded';
      if (job.status !== expected) process.exitCode = 1;
    }
  } finally {
    await teardown.run();
  }
}

/** The demo's throwaway state: its job schema, and its queues (the queue schema, or its Redis keys). */
async function dropDemoState(stores: LocalStores, schema: string, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: stores.postgres.url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    if (stores.backend === 'postgres')
      await client.query(`DROP SCHEMA IF EXISTS ${queueSchemaName(prefix)} CASCADE`);
  } finally {
    await client.end();
  }
  if (stores.redis) await dropRedisPrefix(stores.redis.url, prefix);
}

/** Deletes the demo prefix's keys, so a user's Redis keeps nothing of a finished demo. */
async function dropRedisPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
