import './telemetry/instrument.ts';
import {
  ConfigError,
  chooseBackend,
  loadConfig,
  openStore,
  type SwitchyardConfig,
  WORKER_UNUSED_SECRETS,
} from '@switchyard/contracts';
import { stopTracing } from '@switchyard/telemetry';
import { createLogger } from './runtime/logger.ts';
import { readWorkerEnv } from './runtime/worker-env.ts';
import { ToolWorker } from './tool-worker.ts';

/** `npm run worker`: serves WORKER_SERVERS (default all) from SWITCHYARD_CONFIG until SIGTERM. */
async function main(): Promise<void> {
  const env = readWorkerEnv();
  const log = createLogger({ workerId: env.workerId });
  // Every known background promise handles its errors; one that does not is a bug whose effects are
  // unknown, so the process does not carry on in that state (Node's default), but says so in its log
  // first. Peers take over: BullMQ hands its jobs on, and calls stay truthful through the job fence.
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection: exiting');
    process.exit(1);
  });
  const config = loadConfig(env.configPath, process.env, { unusedSecrets: WORKER_UNUSED_SECRETS });
  const choice = chooseBackend(process.env, config.backend);
  log.info(
    { backend: choice.backend, reason: choice.reason },
    `backend: ${choice.backend} (${choice.reason})`,
  );
  const store = await openStore({
    choice,
    prefix: env.prefix,
    redis: env.redis,
    databaseUrl: env.databaseUrl,
    connectionName: `switchyard-worker-${env.workerId}`,
    // Each call in flight fences, holds and records through it (a served queue's LISTEN adds one more).
    poolMax: 4 + servedConcurrency(config, env.servers),
    onError: (error, what) => log.warn({ err: error }, what),
  });
  const worker = new ToolWorker({ ...env, store, config, log });
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    log.info({ signal }, 'shutdown requested');
    worker
      .stop()
      .then(stopTracing)
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await worker.start();
}

/** Calls this worker may run at once over the servers it serves (each counted up to 8). */
function servedConcurrency(config: SwitchyardConfig, servers: string[] | undefined): number {
  return Object.entries(config.servers)
    .filter(([name]) => !servers || servers.includes(name))
    .reduce((sum, [, server]) => sum + Math.min(server.concurrency, 8), 0);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`switchyard tool-worker: config error: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`switchyard tool-worker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
