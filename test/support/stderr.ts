import type { TestProcess } from './processes.ts';

/** Resolves once `server` wrote `text` to stderr (servers that announce readiness there, not in JSON logs). */
export function waitForStderr(server: TestProcess, text: string, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.name}: no "${text}" on stderr`)), timeoutMs);
    const check = () => {
      if (server.stderr.join('').includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    server.child.stderr?.on('data', check);
    check();
  });
}
