/**
 * `npm run dev`: a whole local deployment until Ctrl-C, like `langgraph dev`. Picks the backend and finds or
 * starts its stores as the demo does (scripts/demo/local-stores.ts: PostgreSQL alone, embedded when none
 * answers, unless a Redis answers),
 * starts the compiled orchestrator (`npm run dev` builds first) and one compiled tool worker on the example
 * MCP servers of switchyard.yaml, prints the API, console and /mcp URLs, the API key and the stores, and
 * keeps them up. SIGINT / SIGTERM stop every process it started, PostgreSQL last, then it exits 0; a
 * process that dies by itself stops the rest and exits 1.
 */
import { randomBytes } from 'node:crypto';
import { relative, resolve } from 'node:path';
import { configPathFromEnv, loadConfig } from '@switchyard/contracts';
import { ensureLocalStores } from './demo/local-stores.ts';
import { Teardown } from './demo/teardown.ts';
import { type StartedProcess, startNodeProcess } from './demo/worker-processes.ts';
import { readyBanner } from './dev/banner.ts';

const ROOT = resolve(import.meta.dirname, '..');
const STATE_DIR = resolve(ROOT, '.switchyard');
const WORKER_ID = 'dev-worker';
const teardown = new Teardown();

async function main(): Promise<void> {
  process.chdir(ROOT);
  teardown.exitOnSignal(0, (signal) => console.log(`\n${signal}: stopping everything npm run dev started`));

  const configPath = configPathFromEnv();
  // The shipped config has no default key (teams.demo.apiKeys: ${SWITCHYARD_DEMO_KEY}).
  const keyFromEnv = Boolean(process.env.SWITCHYARD_DEMO_KEY);
  const demoKey = process.env.SWITCHYARD_DEMO_KEY ?? `dev-${randomBytes(24).toString('base64url')}`;
  const config = loadConfig(configPath, { ...process.env, SWITCHYARD_DEMO_KEY: demoKey });
  const [team, teamConfig] = Object.entries(config.teams)[0] ?? [];
  const apiKey = teamConfig?.apiKeys[0];
  if (!team || !apiKey) throw new Error(`${configPath} defines no team with an API key to print`);

  console.log(`Node.js:    ${process.version} (${process.execPath})`);
  const local = await ensureLocalStores(STATE_DIR, (what, stop) => teardown.add(what, stop));
  const stores = local.lines;
  for (const line of stores) console.log(line);

  const processes: StartedProcess[] = [];
  teardown.add('the orchestrator and worker', async () => {
    await Promise.all(processes.map((started) => started.stop()));
  });
  const common = {
    ...local.env,
    SWITCHYARD_CONFIG: configPath,
    // Fixed defaults, unlike the demo's throwaway ones: jobs of the last session are still there.
    SWITCHYARD_PREFIX: process.env.SWITCHYARD_PREFIX ?? 'switchyard-dev',
    SWITCHYARD_DEMO_KEY: demoKey,
  };
  const worker = startNodeProcess(
    WORKER_ID,
    'apps/tool-worker/dist/main.js',
    { ...common, WORKER_ID, WORKER_HTTP_PORT: '0' },
    STATE_DIR,
  );
  processes.push(worker);
  const orchestrator = startNodeProcess(
    'dev-orchestrator',
    'apps/orchestrator/dist/main.js',
    {
      ...common,
      DATABASE_SCHEMA: process.env.DATABASE_SCHEMA ?? 'switchyard_dev',
      PORT: process.env.PORT ?? '3000',
      HOST: process.env.HOST ?? '127.0.0.1',
      REPLICA_ID: 'dev-orchestrator',
    },
    STATE_DIR,
  );
  processes.push(orchestrator);
  for (const started of processes) stopAllIfItDies(started);

  const [listening] = await Promise.all([
    orchestrator.waitForLog((log) => log.msg === 'orchestrator listening', 'start-up'),
    worker.waitForLog((log) => log.msg === 'tool worker started', 'start-up'),
  ]);
  const host = process.env.HOST && process.env.HOST !== '0.0.0.0' ? process.env.HOST : '127.0.0.1';
  console.log(
    readyBanner({
      baseUrl: `http://${host}:${listening.port}`,
      apiKey,
      team,
      keyFromEnv,
      stores,
      worker: { id: WORKER_ID, servers: Object.keys(config.servers) },
      logs: processes.map((started) => relative(ROOT, started.logFile)),
    }),
  );
}

/** A process that exits while nobody asked it to: say so, stop the rest, exit 1. */
function stopAllIfItDies(started: StartedProcess): void {
  started.child.once('exit', (code, signal) => {
    if (teardown.started) return;
    console.error(`${started.name} exited (${signal ?? code}); see ${started.logFile}. Stopping the rest.`);
    teardown.run().then(() => process.exit(1));
  });
}

main().catch(async (error: unknown) => {
  console.error(`npm run dev failed: ${error instanceof Error ? error.message : String(error)}`);
  await teardown.run();
  process.exit(1);
});
