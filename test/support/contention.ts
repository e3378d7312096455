import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Spins in slices and leaves as soon as its parent is gone, so a test runner killed mid-suite never
 * leaves a core burning behind it.
 */
const SPINNER = `
const parent = process.ppid;
const spin = () => {
  const until = Date.now() + 100;
  while (Date.now() < until) {}
  if (process.ppid !== parent) process.exit(0);
  setImmediate(spin);
};
spin();
`;

/**
 * CPU contention: one busy loop per core, as on a machine whose cores other work keeps busy, so the
 * system under test runs CPU-starved (late timers, late lock renewals, slow event loops).
 */
export class CpuContention {
  private readonly spinners: ChildProcess[] = [];

  /** Whether the env switch asks for contention: `1`/`0`, default on in CI. */
  static wanted(variable: string): boolean {
    const raw = process.env[variable];
    if (raw === undefined || raw === '') return Boolean(process.env.CI) && process.env.CI !== 'false';
    if (raw !== '0' && raw !== '1') throw new Error(`${variable} must be 0 or 1: ${raw}`);
    return raw === '1';
  }

  get running(): number {
    return this.spinners.filter((child) => child.exitCode === null && child.signalCode === null).length;
  }

  /** Starts `count` busy loops (default: one per core) and resolves once every one of them runs. */
  async start(count = availableParallelism()): Promise<void> {
    const started = Array.from({ length: count }, () => {
      const child = spawn(process.execPath, ['-e', SPINNER], { stdio: 'ignore' });
      this.spinners.push(child);
      return new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    });
    await Promise.all(started);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.spinners.splice(0).map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
  }
}

/**
 * Contention for a whole fault-tolerance suite, as the fault suite runs (one busy loop per core when
 * `FAULTS_CONTENTION` asks, default on in CI): started first in beforeAll, stopped first in afterAll, and
 * said in the output so a failure names how to replay it.
 */
export class SuiteContention {
  private readonly cpu = new CpuContention();

  constructor(private readonly suite: string) {}

  async start(): Promise<void> {
    const on = CpuContention.wanted('FAULTS_CONTENTION');
    console.log(`${this.suite}: contention ${on ? 'on' : 'off'}; rerun with FAULTS_CONTENTION=${on ? 1 : 0}`);
    if (on) await this.cpu.start();
  }

  stop(): Promise<void> {
    return this.cpu.stop();
  }
}
