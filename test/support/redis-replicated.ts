import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { TestProcess } from './processes.ts';
import { volatileRedisArgs } from './redis-server.ts';

/**
 * A primary and one replica of a caller's own on loopback, the replica replicating straight from the
 * primary (no proxy in between: what the benchmark measures is what a deployment pays). No persistence,
 * as DedicatedRedis({ persistent: false }). Readiness is read from their logs; `close()` kills both.
 */
export class ReplicatedRedis {
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-replicated-'));
  private readonly processes: TestProcess[] = [];
  primaryPort = 0;
  replicaPort = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.primaryPort}`;
  }

  async start(): Promise<void> {
    this.primaryPort = await freePort();
    const primary = this.spawn('primary', this.primaryPort, ['--repl-diskless-sync-delay', '0']);
    await primary.waitFor((_, raw) => raw.includes('Ready to accept connections'), 'primary ready');
    this.replicaPort = await freePort();
    const replica = this.spawn('replica', this.replicaPort, [
      '--replicaof',
      '127.0.0.1',
      String(this.primaryPort),
    ]);
    await replica.waitFor(
      (_, raw) => raw.includes('MASTER <-> REPLICA sync: Finished with success'),
      'replica in sync',
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((proc) => proc.crash().catch(() => undefined)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawn(name: string, port: number, extra: string[]): TestProcess {
    const child = spawn('redis-server', volatileRedisArgs(port, this.dir, name, extra), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new TestProcess(`redis ${name}`, child);
    this.processes.push(started);
    return started;
  }
}
