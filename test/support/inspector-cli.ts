import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
/** The Inspector's launcher (its package exports no JS entry; the bin is this file). */
const LAUNCHER = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);

export interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the MCP Inspector CLI (`inspector --cli`) once against a Streamable HTTP endpoint, on this
 * process's Node (≥ 22, which the Inspector needs). The timeout kills it if it hangs, so no process
 * outlives the test. `home` stands in for HOME, so its settings files stay out of the user's home.
 */
export function inspectorCli(
  url: string,
  args: string[],
  home: string,
  timeoutMs = 60_000,
): Promise<InspectorRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [LAUNCHER, '--cli', url, '--transport', 'http', ...args],
      { timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, HOME: home, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}
