import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PROCESS_NODE_FLAGS } from '@switchyard/contracts';

export interface StartedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** Resolves with the first JSON log line that matches. */
  waitForLog: (
    match: (log: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ) => Promise<Record<string, unknown>>;
  stop: () => Promise<void>;
}

/** Runs `node <flags> <entry>` (the flags every Switchyard process runs with; compiled JavaScript, see `npm run build`) with its JSON logs teed to .switchyard/<name>.log. */
export function startNodeProcess(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  logDir: string,
): StartedProcess {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [...PROCESS_NODE_FLAGS, entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.pipe(log);
  const listeners = new Set<(line: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    log.write(`${line}\n`);
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      for (const listener of listeners) listener(parsed);
    } catch {
      // plain text lines only go to the file
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    logFile,
    waitForLog: (match, what, timeoutMs = 60_000) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`${name}: no ${what} within ${timeoutMs} ms (see ${logFile})`)),
          timeoutMs,
        );
        const onExit = () => finish(new Error(`${name} exited before ${what} (see ${logFile})`));
        const listener = (line: Record<string, unknown>) => match(line) && finish(undefined, line);
        const finish = (error?: Error, line: Record<string, unknown> = {}) => {
          clearTimeout(timer);
          listeners.delete(listener);
          child.off('exit', onExit);
          if (error) reject(error);
          else resolve(line);
        };
        listeners.add(listener);
        child.once('exit', onExit);
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(force);
      }
      log.end();
    },
  };
}
