/**
 * `npm run demo`: the main job on local defaults. Finds or starts Redis, starts two tool workers on the
 * example MCP servers of switchyard.yaml, sends a batch of tool calls through the fleet, prints every
 * call's outcome, and stops everything it started.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { configPathFromEnv, loadConfig, type ToolCallOutcome } from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { Redis } from 'ioredis';
import { ensureRedis } from './demo/local-services.ts';
import { printOutcomes } from './demo/print-outcomes.ts';
import { type StartedProcess, startNodeProcess } from './demo/worker-processes.ts';

const ROOT = resolve(import.meta.dirname, '..');
const LOG_DIR = resolve(ROOT, '.switchyard');

async function main(): Promise<void> {
  process.chdir(ROOT);
  const configPath = configPathFromEnv();
  const config = loadConfig(configPath);
  const redisService = await ensureRedis();
  console.log(`Redis: ${redisService.url} (${redisService.source})`);
  const prefix = `switchyard-demo-${randomUUID().slice(0, 8)}`;
  const workers: StartedProcess[] = [];
  const redis = new Redis(redisService.url, {
    maxRetriesPerRequest: null,
    connectionName: 'switchyard-demo',
  });
  let dispatcher: ToolCallDispatcher | undefined;
  try {
    for (const id of ['demo-worker-1', 'demo-worker-2']) {
      workers.push(
        startNodeProcess(
          id,
          'apps/tool-worker/src/main.ts',
          {
            REDIS_URL: redisService.url,
            SWITCHYARD_CONFIG: configPath,
            SWITCHYARD_PREFIX: prefix,
            WORKER_ID: id,
          },
          LOG_DIR,
        ),
      );
    }
    await Promise.all(
      workers.map((worker) => worker.waitForLog((log) => log.msg === 'tool worker started', 'start-up')),
    );
    console.log(`Workers: ${workers.map((worker) => `${worker.name} (logs: ${worker.logFile})`).join(', ')}`);

    dispatcher = new ToolCallDispatcher({ config, prefix, redis, catalog: new CatalogReader(redis, prefix) });
    await dispatcher.start();
    const jobId = `demo-${randomUUID().slice(0, 8)}`;
    const calls: Array<[string, string, Record<string, unknown>]> = [
      ['search', 'search', { query: 'serialized queue', limit: 3 }],
      ['search', 'get_document', { id: 'no-such-document' }],
      ['notes', 'add_note', { text: 'written exactly once' }],
      ['notes', 'add_note', { text: 42 }],
      ['slow', 'sleep', { ms: 500, progressEveryMs: 100 }],
      ...Array.from({ length: 6 }, (_, index): [string, string, Record<string, unknown>] => [
        'recorder',
        'record',
        { ms: 40, label: `serialized-${index}` },
      ]),
    ];
    const started = Date.now();
    const active = dispatcher;
    const outcomes: ToolCallOutcome[] = await Promise.all(
      calls.map(([server, tool, args], index) =>
        active.dispatch({ jobId, toolCallId: `call-${index + 1}`, server, tool, arguments: args }),
      ),
    );
    printOutcomes(`Batch ${jobId}: ${calls.length} calls in ${Date.now() - started} ms`, outcomes);
    const counts = outcomes.reduce<Record<string, number>>((all, outcome) => {
      all[outcome.status] = (all[outcome.status] ?? 0) + 1;
      return all;
    }, {});
    console.log(
      `\nOutcomes: ${Object.entries(counts)
        .map(([status, count]) => `${status} ${count}`)
        .join(', ')}`,
    );
  } finally {
    await dispatcher?.close();
    await Promise.all(workers.map((worker) => worker.stop()));
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await redisService.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
