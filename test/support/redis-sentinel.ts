import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.ts';
import { TestProcess } from './processes.ts';
import { volatileRedisArgs } from './redis-server.ts';
import { ReplicationGate } from './replication-gate.ts';

export const SENTINEL_NAME = 'mymaster';

/**
 * A Sentinel-watched Redis of a test's own, on loopback: a primary behind a ReplicationGate (the address
 * sentinels, replica and clients use, so the test decides when the replica lags), one replica, and three
 * sentinels (quorum 2) with short failure detection. Every wait is on the processes' own log lines or INFO; `stop()` ends every process
 * it started, also after a failed start.
 */
export class SentinelGroup {
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-sentinel-'));
  private readonly processes: TestProcess[] = [];
  primary: TestProcess | undefined;
  replica: TestProcess | undefined;
  sentinels: TestProcess[] = [];
  gate: ReplicationGate | undefined;
  primaryPort = 0;
  replicaPort = 0;
  sentinelPorts: number[] = [];

  /** The sentinels as REDIS_SENTINELS wants them. */
  get seeds(): string {
    return this.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',');
  }

  async start(): Promise<void> {
    this.primaryPort = await freePort();
    // Diskless sync without its default 5 s wait for more replicas: the replica is in sync at once.
    this.primary = this.redis('primary', this.primaryPort, ['--repl-diskless-sync-delay', '0']);
    await this.primary.waitFor((_, raw) => raw.includes('Ready to accept connections'), 'primary ready');
    this.gate = await ReplicationGate.start(this.primaryPort);
    this.replicaPort = await freePort();
    this.replica = this.redis('replica', this.replicaPort, [
      '--replicaof',
      '127.0.0.1',
      String(this.gate.port),
    ]);
    await this.replica.waitFor(
      (_, raw) => raw.includes('MASTER <-> REPLICA sync: Finished with success'),
      'replica in sync',
    );
    for (let index = 0; index < 3; index++) {
      const port = await freePort();
      this.sentinelPorts.push(port);
      const conf = join(this.dir, `sentinel-${index}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${this.dir}`,
          'logfile ""',
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${this.gate.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
          `sentinel failover-timeout ${SENTINEL_NAME} 3000`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      );
      this.sentinels.push(this.spawn(`sentinel ${index}`, [conf, '--sentinel']));
    }
    // Each sentinel must know the replica (to promote it) and the two others (to reach the quorum).
    await Promise.all(
      this.sentinels.map(async (sentinel) => {
        await sentinel.waitFor(
          (_, raw) => raw.includes(`+slave slave 127.0.0.1:${this.replicaPort}`),
          'replica found',
        );
        let others = 0;
        await sentinel.waitFor(
          (_, raw) => raw.includes('+sentinel sentinel') && ++others === 2,
          'two other sentinels',
        );
      }),
    );
  }

  /** INFO replication of the primary as one Redis connection sees it (a plain one, not through Sentinel). */
  async primaryInfo(): Promise<string> {
    return this.info(this.primaryPort);
  }

  /**
   * Resolves once the replica has applied everything the primary had written when this was called (its
   * offset reached the primary's): what the test holds back afterwards is exactly the newer writes.
   */
  async replicaCaughtUp(timeoutMs = 10_000): Promise<void> {
    const target = offsetOf(await this.info(this.primaryPort), 'master_repl_offset');
    const until = Date.now() + timeoutMs;
    for (;;) {
      const applied = offsetOf(await this.info(this.replicaPort), 'slave_repl_offset');
      if (applied >= target) return;
      if (Date.now() > until) throw new Error(`replica stuck at offset ${applied}, primary at ${target}`);
      // INFO has no way to block on an offset: a short poll of the replica's own figure.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** SIGKILL of the primary: nothing it had not yet sent reaches the replica (the gate drops it). */
  async killPrimary(): Promise<void> {
    await this.primary?.crash();
  }

  /** Resolves when a sentinel announces the replica as the new primary (+switch-master). */
  async promoted(timeoutMs = 60_000): Promise<void> {
    const line = `+switch-master ${SENTINEL_NAME} 127.0.0.1 ${this.gate?.port} 127.0.0.1 ${this.replicaPort}`;
    await Promise.any(
      this.sentinels.map((sentinel) =>
        sentinel.waitFor((_, raw) => raw.includes(line), 'failover', timeoutMs),
      ),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes.map((proc) => proc.crash().catch(() => undefined)));
    await this.gate?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async info(port: number): Promise<string> {
    const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      return await redis.info('replication');
    } finally {
      redis.disconnect();
    }
  }

  private redis(name: string, port: number, extra: string[]): TestProcess {
    // No persistence: a restart is not part of these tests, and fsyncs would only slow a loaded machine.
    return this.spawn(name, volatileRedisArgs(port, this.dir, name, extra));
  }

  private spawn(name: string, args: string[]): TestProcess {
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const started = new TestProcess(name, child);
    this.processes.push(started);
    return started;
  }
}

function offsetOf(info: string, field: string): number {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  if (!match) throw new Error(`no ${field} in INFO replication`);
  return Number(match[1]);
}
