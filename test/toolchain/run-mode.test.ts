/**
 * What the suites really run: the Node version (>= 22.15, 24 in CI: the scripts' `node` is the one
 * scripts/toolchain put first on PATH) and, per SWITCHYARD_COMPILED, the compiled apps and example
 * servers (`node dist/….js`) or the TypeScript sources under tsx — checked on the live processes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { PROCESS_NODE_FLAGS } from '@switchyard/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { REPO_ROOT } from '../support/paths.ts';
import { descendants } from '../support/processes.ts';

/** Read here, not from paths.ts: this test checks that paths.ts honours it. */
const COMPILED = process.env.SWITCHYARD_COMPILED === '1';

function isRecentEnough(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 15);
}

/** argv of a live process, paths relative to the repository. */
function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg !== '')
    .map((arg) => arg.replace(`${REPO_ROOT}/`, ''));
}

describe(`run mode (${COMPILED ? 'compiled' : 'source'})`, () => {
  const fleet = new Fleet('run-mode', () => ({ recorder: exampleServer('recorder') }));
  afterAll(() => fleet.close());

  it('runs on Node >= 22.15, and so does the `node` that npm scripts find on PATH', () => {
    expect(isRecentEnough(process.version), process.version).toBe(true);
    const onPath = execFileSync('node', ['-p', 'process.version'], { encoding: 'utf8' }).trim();
    expect(isRecentEnough(onPath), `node on PATH is ${onPath}`).toBe(true);
  });

  it('starts the worker and its stdio MCP servers as the run mode says, on the same Node', async () => {
    const worker = await fleet.startWorker({ id: 'w-mode' });
    const pid = worker.child.pid;
    if (pid === undefined) throw new Error('the worker has no pid');
    const children = descendants(pid).filter((child) =>
      argvOf(child).some((arg) => arg.includes('recorder')),
    );
    expect(children).toHaveLength(1);
    const [server = -1] = children;

    const workerArgv = argvOf(pid);
    const serverArgv = argvOf(server);
    if (COMPILED) {
      // The flags every Switchyard process runs with (libs/contracts/src/process-flags.ts), as the images.
      expect(workerArgv.slice(1)).toEqual([...PROCESS_NODE_FLAGS, 'apps/tool-worker/dist/main.js']);
      expect(serverArgv.slice(1)).toEqual(['examples/mcp-servers/dist/recorder.js']);
      expect(existsSync(`${REPO_ROOT}/apps/tool-worker/dist/main.js`)).toBe(true);
    } else {
      expect(workerArgv.slice(1)).toEqual([
        ...PROCESS_NODE_FLAGS,
        '--conditions=@switchyard/source',
        '--import',
        'tsx',
        'apps/tool-worker/src/main.ts',
      ]);
      expect(serverArgv.slice(-1)).toEqual(['examples/mcp-servers/src/recorder.ts']);
    }
    const node = realpathSync(process.execPath);
    expect(readlinkSync(`/proc/${pid}/exe`)).toBe(node);
    expect(readlinkSync(`/proc/${server}/exe`)).toBe(node);
  });
});
