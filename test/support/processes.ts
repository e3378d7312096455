import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './paths.ts';

export type LogLine = Record<string, unknown>;

/** All pids below `pid` (children, grandchildren...), read from the process table. */
export function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of table) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A process a test started. Its stdout is read line by line (JSON logs parsed) so tests wait on what
 * the process says, not on sleeps. `stop()` and `kill()` also end its descendants.
 */
export class TestProcess {
  readonly lines: string[] = [];
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  private readonly listeners = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      this.lines.push(line);
      try {
        this.logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not JSON: kept in lines only
      }
      for (const listener of this.listeners) listener();
    });
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Resolves with the first output line (parsed log or raw) that matches; rejects on exit or timeout. */
  waitFor(match: (log: LogLine, raw: string) => boolean, what: string, timeoutMs = 30_000): Promise<LogLine> {
    return new Promise((resolve, reject) => {
      let seen = 0;
      const scan = () => {
        for (; seen < this.lines.length; seen++) {
          const raw = this.lines[seen] as string;
          let log: LogLine = {};
          try {
            log = JSON.parse(raw) as LogLine;
          } catch {}
          if (match(log, raw)) {
            done();
            resolve(log);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `${this.name}: timed out after ${timeoutMs} ms waiting for ${what}; last output: ${this.lines.slice(-3).join(' | ').slice(-1500)}; stderr: ${this.stderr.join('').slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const onExit = (code: number | null) => {
        done();
        reject(
          new Error(
            `${this.name} exited (${code}) while waiting for ${what}; stderr: ${this.stderr.join('').slice(-2000)}`,
          ),
        );
      };
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(scan);
        this.child.off('exit', onExit);
      };
      this.listeners.add(scan);
      this.child.once('exit', onExit);
      scan();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; descendants still alive afterwards are killed too. */
  async stop(graceMs = 10_000): Promise<void> {
    const family = descendants(this.pid);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    killAll(family);
  }

  /** SIGKILL, as a crash: descendants are left running (like a real crash) and returned. */
  async crash(): Promise<number[]> {
    const family = descendants(this.pid);
    this.child.kill('SIGKILL');
    await this.exited;
    return family;
  }
}

export function killAll(pids: number[]): void {
  signalAll(pids, 'SIGKILL');
}

export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * SIGSTOP `pids` for `ms`, then SIGCONT (also when interrupted): a GC pause or a frozen VM as the
 * rest of the system sees it. The process keeps its sockets and its view of time jumps on waking.
 */
export async function freeze(pids: number[], ms: number): Promise<void> {
  signalAll(pids, 'SIGSTOP');
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    signalAll(pids, 'SIGCONT');
  }
}

/**
 * Freezes a worker and its MCP server children until they are killed, so the call it holds stays
 * mid-flight for as long as a test needs (starting a survivor can take longer than any hold a call could
 * be given on a busy machine, and a call that finished before the crash proves nothing). Adds them to
 * `frozen`, which the suite kills in afterAll, also when a test failed; returns the children's pids.
 */
export function freezeWithChildren(worker: TestProcess, frozen: number[]): number[] {
  const family = [worker.pid, ...descendants(worker.pid)];
  for (const pid of family) process.kill(pid, 'SIGSTOP');
  frozen.push(...family);
  return family.slice(1);
}

/** Keeps every process a suite started, so `stopAll()` in afterAll ends them even when a test failed. */
export class ProcessGroup {
  readonly processes: TestProcess[] = [];
  private readonly orphans: number[] = [];

  start(name: string, args: string[], env: NodeJS.ProcessEnv = {}): TestProcess {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new TestProcess(name, child);
    this.processes.push(started);
    return started;
  }

  /** Pids a crash left behind (a killed worker's stdio children), to be reaped at the end. */
  adopt(pids: number[]): void {
    this.orphans.push(...pids);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.processes.map((proc) => proc.stop(5_000)));
    killAll(this.orphans);
  }
}
