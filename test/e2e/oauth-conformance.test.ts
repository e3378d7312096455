import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ToolCallOutcome } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Fleet } from '../support/fleet.ts';
import { REPO_ROOT } from '../support/paths.ts';

const require = createRequire(import.meta.url);
const CONFORMANCE = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);
/** The suite's client command: relays the scenario to this test (support/conformance-bridge.ts). */
const BRIDGE = join(REPO_ROOT, 'test/support/conformance-bridge.ts');
const SERVER = 'conformance';

/** What the client command relays: the scenario server's URL and the scenario's context. */
const BridgeRequestSchema = z.object({
  serverUrl: z.url(),
  scenario: z.string(),
  context: z.object({
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    private_key_pem: z.string().optional(),
    signing_algorithm: z.enum(['RS256', 'ES256']).optional(),
  }),
});
type BridgeRequest = z.infer<typeof BridgeRequestSchema>;

const CheckSchema = z.object({ id: z.string(), status: z.string() });

/**
 * The credential a scenario's worker is configured with, as an operator would write it: its secrets
 * as `${VAR}` (returned in `env`). metadata-var3 is the case of an operator-given refresh token.
 */
function credentialFor({ scenario, context }: BridgeRequest): {
  credential: Record<string, unknown>;
  env: Record<string, string>;
} {
  switch (scenario) {
    case 'auth/metadata-var3':
      return {
        credential: {
          type: 'refresh_token',
          clientId: 'switchyard-conformance',
          refreshToken: `\${CONFORMANCE_REFRESH_TOKEN}`,
        },
        env: { CONFORMANCE_REFRESH_TOKEN: 'operator-given-refresh-token' },
      };
    case 'auth/client-credentials-basic':
      return {
        credential: {
          type: 'client_credentials',
          clientId: context.client_id,
          clientSecret: `\${CONFORMANCE_CLIENT_SECRET}`,
        },
        env: { CONFORMANCE_CLIENT_SECRET: context.client_secret ?? '' },
      };
    case 'auth/client-credentials-jwt':
      return {
        credential: {
          type: 'private_key_jwt',
          clientId: context.client_id,
          privateKey: `\${CONFORMANCE_PRIVATE_KEY}`,
          algorithm: context.signing_algorithm,
        },
        env: { CONFORMANCE_PRIVATE_KEY: context.private_key_pem ?? '' },
      };
    default:
      throw new Error(`no credential for scenario ${scenario}`);
  }
}

/**
 * The MCP conformance suite's OAuth client scenarios (`@modelcontextprotocol/conformance`, `client`)
 * with a real worker process as the client: for each scenario the suite starts its servers and runs the
 * client command, which hands the server URL here; a worker configured for it (the scenario's
 * credential for its session and for the calling team) then makes one `tools/call`.
 */
describe('the worker as an OAuth client: conformance client scenarios', () => {
  let bridge: Server;
  let bridgeUrl: string;
  let results: string;
  const outcomes = new Map<string, ToolCallOutcome | string>();

  /** One scenario's call, through a worker started for it and stopped after it. */
  async function callThroughWorker(request: BridgeRequest): Promise<ToolCallOutcome> {
    const { credential, env } = credentialFor(request);
    // The test's own parse of the config expands ${VAR} too.
    Object.assign(process.env, env);
    const fleet = new Fleet('oauth-conformance', () => ({
      [SERVER]: { url: request.serverUrl, auth: { session: credential, default: credential } },
    }));
    Object.assign(fleet.processEnv, env);
    try {
      await fleet.startWorker({ timeoutMs: 45_000 });
      return await (await fleet.dispatcher()).dispatch({
        jobId: 'oauth-conformance',
        toolCallId: request.scenario,
        server: SERVER,
        tool: 'test-tool',
        arguments: {},
        team: 'conformance',
      });
    } finally {
      await fleet.close();
    }
  }

  beforeAll(async () => {
    results = mkdtempSync(join(tmpdir(), 'switchyard-oauth-conformance-'));
    bridge = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const request = BridgeRequestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        callThroughWorker(request).then(
          (outcome) => {
            outcomes.set(request.scenario, outcome);
            outgoing.writeHead(outcome.status === 'ok' ? 200 : 502).end(JSON.stringify(outcome));
          },
          (error: unknown) => {
            outcomes.set(request.scenario, String(error));
            outgoing.writeHead(500).end(String(error));
          },
        );
      });
    });
    await new Promise<void>((resolve) => bridge.listen(0, '127.0.0.1', resolve));
    bridgeUrl = `http://127.0.0.1:${(bridge.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    bridge?.closeAllConnections();
    await new Promise<void>((resolve) => (bridge ? bridge.close(() => resolve()) : resolve()));
    if (results) rmSync(results, { recursive: true, force: true });
  });

  /** Runs one client scenario; its checks by id (a missing expected step is a FAILURE check). */
  async function runScenario(scenario: string) {
    const output = join(results, scenario.replace('/', '-'));
    const run = await new Promise<{ code: number; log: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          CONFORMANCE,
          'client',
          '--command',
          `${process.execPath} ${BRIDGE}`,
          '--scenario',
          scenario,
          '--timeout',
          '120000',
          '-o',
          output,
        ],
        {
          timeout: 180_000,
          killSignal: 'SIGKILL',
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, SWITCHYARD_CONFORMANCE_BRIDGE: bridgeUrl, NO_COLOR: '1' },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? -1) : 0, log: `${stdout}\n${stderr}` }),
      );
    });
    // The suite writes <output>/<scenario>-<time>/checks.json, the scenario's "/" a folder of its own.
    const file = readdirSync(output, { recursive: true }).find((path) =>
      String(path).endsWith('checks.json'),
    );
    if (!file) throw new Error(`the suite wrote no checks.json\n${run.log}`);
    const checks = z.array(CheckSchema).parse(JSON.parse(readFileSync(join(output, String(file)), 'utf8')));
    const failed = checks.filter((check) => check.status === 'FAILURE').map((check) => check.id);
    const passed = new Set(checks.filter((check) => check.status === 'SUCCESS').map((check) => check.id));
    console.log(`${scenario}: ${passed.size} passed, failing: ${failed.join(', ') || 'none'}`);
    return { ...run, failed, passed, outcome: outcomes.get(scenario) };
  }

  it('metadata-var3 with an operator-given refresh token: the metadata the 401 names, then the tenant’s OpenID metadata, then its token endpoint', async () => {
    const result = await runScenario('auth/metadata-var3');
    expect(result.outcome, result.log).toMatchObject({ status: 'ok', executed: 'yes' });
    for (const step of [
      // The protected-resource metadata at the custom URL only the 401's resource_metadata names.
      'prm-pathbased-requested',
      'authorization-server-metadata',
      'token-request',
      'valid-bearer-token',
    ]) {
      expect(result.passed, `${step}\n${result.log}`).toContain(step);
    }
    // The only steps missing are those of the interactive authorization code flow (registering, sending
    // a person to the authorization endpoint), which the operator went through once to get the refresh
    // token; a worker never does.
    expect(result.failed.sort(), result.log).toEqual(['authorization-request', 'client-registration']);
  });

  it('client-credentials-basic: the client secret, as HTTP Basic, at the discovered token endpoint', async () => {
    const result = await runScenario('auth/client-credentials-basic');
    expect(result.outcome, result.log).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(result.failed, result.log).toEqual([]);
    expect(result.passed).toContain('client-credentials-basic-auth');
    expect(result.code, result.log).toBe(0);
  });

  it('client-credentials-jwt: private_key_jwt, a JWT signed with the configured key (RFC 7523)', async () => {
    const result = await runScenario('auth/client-credentials-jwt');
    expect(result.outcome, result.log).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(result.failed, result.log).toEqual([]);
    expect(result.passed).toContain('client-credentials-jwt-verified');
    expect(result.code, result.log).toBe(0);
  });
});
