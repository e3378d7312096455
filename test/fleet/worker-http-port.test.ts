import { redisKeys, WorkerHeartbeatSchema } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { entryPoint, tsxArgs } from '../support/paths.ts';

/**
 * Several workers on one host: WORKER_HTTP_PORT=0 lets each pick a free port, logged and announced in
 * its heartbeat; a port that is taken is a config error naming WORKER_HTTP_PORT (exit code 2), not a
 * bare EADDRINUSE stack.
 */
describe('worker HTTP port on a shared host', () => {
  let fleet: Fleet;

  beforeAll(() => {
    fleet = new Fleet('worker-port', () => ({ slow: exampleServer('slow', { idempotent: ['sleep'] }) }));
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const announcedPort = async (workerId: string): Promise<number | undefined> => {
    const raw = await fleet.redis.hget(redisKeys.workers(fleet.prefix), workerId);
    return raw ? WorkerHeartbeatSchema.parse(JSON.parse(raw)).httpPort : undefined;
  };

  it('two workers with WORKER_HTTP_PORT=0 both serve, each on its own announced port', async () => {
    const [first, second] = await Promise.all([
      fleet.startWorker({ id: 'w-port-a' }),
      fleet.startWorker({ id: 'w-port-b' }),
    ]);
    const ports: number[] = [];
    for (const worker of [first, second]) {
      const listening = await worker.waitFor((log) => log.msg === 'worker http listening', 'http port');
      const port = listening.port as number;
      expect(port).toBeGreaterThan(0);
      ports.push(port);
      const live = await fetch(`http://127.0.0.1:${port}/health/live`);
      expect(live.status).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain('switchyard_worker');
    }
    expect(ports[0]).not.toBe(ports[1]);
    await fleet.sessionState('slow', 'ready');
    expect(await announcedPort('w-port-a')).toBe(ports[0]);
    expect(await announcedPort('w-port-b')).toBe(ports[1]);
  });

  it('a taken port is a config error naming WORKER_HTTP_PORT, exit code 2', async () => {
    const holder = await fleet.startWorker({ id: 'w-port-holder' });
    const listening = await holder.waitFor((log) => log.msg === 'worker http listening', 'http port');
    const taken = String(listening.port);
    const clash = fleet.group.start(
      'worker clash',
      tsxArgs(entryPoint('apps/tool-worker', 'main', fleet.runMode)),
      {
        REDIS_URL: fleet.redisUrl,
        SWITCHYARD_CONFIG: fleet.configPath,
        SWITCHYARD_PREFIX: fleet.prefix,
        WORKER_ID: 'w-port-clash',
        WORKER_HTTP_PORT: taken,
      },
    );
    expect(await clash.exited).toBe(2);
    const stderr = clash.stderr.join('');
    expect(stderr).toContain('WORKER_HTTP_PORT');
    expect(stderr).toContain(`port ${taken} is already in use`);
    expect(stderr).not.toContain('    at ');
  });
});
