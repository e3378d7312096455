import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthProxy } from '../support/auth-proxy.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { REPO_ROOT } from '../support/paths.ts';

const require = createRequire(import.meta.url);
const CONFORMANCE = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);
/** The scenarios /mcp is known to fail, each with its reason (README.md, "MCP conformance"). */
const BASELINE = join(REPO_ROOT, 'test/e2e/mcp-conformance-baseline.yml');

interface Check {
  id?: string;
  name?: string;
  status: string;
}

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against
 * /mcp. It cannot send an API key, so it talks to a local proxy that adds one. The run passes when
 * every failure is in the baseline (each with a reason) and no baseline entry has started to pass.
 */
describe('MCP conformance of /mcp', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let proxy: Awaited<ReturnType<typeof startAuthProxy>>;

  beforeAll(async () => {
    deployment = new Deployment('mcp-conformance', () => ({
      search: exampleServer('search', { trusted: true }),
      slow: exampleServer('slow'),
    }));
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-mcp-conformance');
    // The suite calls its reference server's tools by their own names; those the fleet has a real
    // counterpart for are renamed on the way (slow's log_lines sends the suite's three log lines).
    proxy = await startAuthProxy(orchestrator.url, TEAM_KEYS.alpha, {
      rename: { test_tool_with_logging: 'slow__log_lines' },
    });
  });

  afterAll(async () => {
    await proxy?.close();
    await deployment?.close();
  });

  it('passes every server scenario outside the baseline', async () => {
    const output = deployment.path('conformance');
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CONFORMANCE, 'server', '--url', `${proxy.url}/mcp`, '--expected-failures', BASELINE, '-o', output],
        {
          timeout: 300_000,
          killSignal: 'SIGKILL',
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, NO_COLOR: '1' },
        },
        (error, stdout, stderr) =>
          resolve({
            code: error ? Number(error.code ?? -1) : 0,
            stdout: String(stdout),
            stderr: String(stderr),
          }),
      );
    });
    const scenarios = readdirSync(output);
    const failed = scenarios.filter((dir) =>
      (JSON.parse(readFileSync(join(output, dir, 'checks.json'), 'utf8')) as Check[]).some(
        (check) => check.status === 'FAILURE',
      ),
    );
    console.log(`conformance: ${scenarios.length} scenarios, failing: ${failed.join(', ') || 'none'}`);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    // The core of a tools-only server passes: initialize, ping, tools/list; and a tool's logs reach the
    // client at the level it set.
    for (const core of [
      'server-initialize',
      'ping',
      'tools-list',
      'tools-call-with-logging',
      'logging-set-level',
    ]) {
      expect(failed.some((dir) => dir.includes(core))).toBe(false);
    }
  });
});
