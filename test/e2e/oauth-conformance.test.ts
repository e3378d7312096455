import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const suiteCli = (name: string) => join(dirname(require.resolve(`${name}/package.json`)), 'dist/index.js');
/** The suite's release (0.1.16), and its alpha (0.2.0-alpha.12, pinned) for the scenarios only it has. */
const CONFORMANCE = suiteCli('@modelcontextprotocol/conformance');
const CONFORMANCE_ALPHA = suiteCli('@modelcontextprotocol/conformance-alpha');
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
    // Enterprise-managed authorization: the enterprise identity provider and the user's ID token.
    idp_client_id: z.string().optional(),
    idp_id_token: z.string().optional(),
    idp_issuer: z.url().optional(),
    idp_token_endpoint: z.url().optional(),
    // Workload identity: the JWT the platform would have projected into the worker's pod.
    valid_jwt: z.string().optional(),
    // Scenarios that are not about credentials name the calls to make (default: test-tool, no arguments).
    toolCalls: z
      .array(z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) }))
      .optional(),
  }),
});
type BridgeRequest = z.infer<typeof BridgeRequestSchema>;

const CheckSchema = z.object({ id: z.string(), status: z.string() });

/**
 * The calls a model would make in scenarios whose context names none: http-invalid-tool-headers lists a
 * valid tool and eleven whose `x-mcp-header` declarations break SEP-2243's rules, and expects the client
 * to call the first and never the others.
 */
const INVALID_HEADER_TOOLS: Record<string, Record<string, unknown>> = {
  invalid_empty_header: { value: 'x' },
  invalid_object_header: { data: {} },
  invalid_array_header: { items: ['x'] },
  invalid_null_header: { nil: null },
  invalid_number_header: { score: 1.5 },
  invalid_duplicate_same_case: { field1: 'a', field2: 'b' },
  invalid_duplicate_diff_case: { field1: 'a', field2: 'b' },
  invalid_space_in_name: { value: 'x' },
  invalid_colon_in_name: { value: 'x' },
  invalid_non_ascii_name: { value: 'x' },
  invalid_control_char_name: { value: 'x' },
};
const SCENARIO_CALLS: Record<string, Array<{ name: string; arguments: Record<string, unknown> }>> = {
  'http-invalid-tool-headers': [
    { name: 'valid_tool', arguments: { region: 'us-west1' } },
    ...Object.entries(INVALID_HEADER_TOOLS).map(([name, args]) => ({ name, arguments: args })),
  ],
};

/**
 * The credential a scenario's worker is configured with, as an operator would write it: its secrets
 * as `${VAR}` (returned in `env`) or in a file of the fleet's directory `dir` (a mounted secret, a
 * projected token). metadata-var3 is the case of an operator-given refresh token.
 */
function credentialFor(
  { scenario, context }: BridgeRequest,
  dir: string,
): {
  credential?: Record<string, unknown>;
  env: Record<string, string>;
} {
  if (!scenario.startsWith('auth/')) return { env: {} };
  switch (scenario) {
    case 'auth/dpop':
    case 'auth/dpop-nonce':
      // The scenario's authorization server grants authorization_code and refresh_token: a headless
      // worker holds an operator-given refresh token, and asks for DPoP-bound tokens with it.
      return {
        credential: {
          type: 'refresh_token',
          clientId: 'switchyard-conformance',
          refreshToken: `\${CONFORMANCE_REFRESH_TOKEN}`,
          dpop: true,
        },
        env: { CONFORMANCE_REFRESH_TOKEN: 'operator-given-refresh-token' },
      };
    case 'auth/wif-jwt-bearer': {
      // As Kubernetes projects a service-account token: a file the worker reads when it needs a token.
      const tokenFile = join(dir, 'workload-token');
      writeFileSync(tokenFile, `${context.valid_jwt ?? ''}\n`);
      return {
        credential: { type: 'workload_identity', clientId: context.client_id, assertionFile: tokenFile },
        env: {},
      };
    }
    case 'auth/cross-app-access-complete-flow':
      // The identity provider named by its token endpoint, the ID token from the environment.
      return {
        credential: {
          type: 'enterprise_managed_authorization',
          clientId: context.client_id,
          clientSecret: `\${CONFORMANCE_CLIENT_SECRET}`,
          idp: { tokenEndpoint: context.idp_token_endpoint, clientId: context.idp_client_id },
          idToken: `\${CONFORMANCE_ID_TOKEN}`,
        },
        env: {
          CONFORMANCE_CLIENT_SECRET: context.client_secret ?? '',
          CONFORMANCE_ID_TOKEN: context.idp_id_token ?? '',
        },
      };
    case 'auth/enterprise-managed-authorization': {
      // The identity provider found from its issuer's metadata, the ID token in a file.
      const idTokenFile = join(dir, 'id-token');
      writeFileSync(idTokenFile, context.idp_id_token ?? '');
      return {
        credential: {
          type: 'enterprise_managed_authorization',
          clientId: context.client_id,
          clientSecret: `\${CONFORMANCE_CLIENT_SECRET}`,
          idp: { issuer: context.idp_issuer, clientId: context.idp_client_id },
          idTokenFile,
        },
        env: { CONFORMANCE_CLIENT_SECRET: context.client_secret ?? '' },
      };
    }
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
  const outcomes = new Map<string, ToolCallOutcome[] | string>();

  /** One scenario's calls, one after the other, through a worker started for it and stopped after it. */
  async function callThroughWorker(request: BridgeRequest): Promise<ToolCallOutcome[]> {
    let env: Record<string, string> = {};
    const fleet = new Fleet('oauth-conformance', (dir) => {
      const configured = credentialFor(request, dir);
      env = configured.env;
      // The test's own parse of the config expands ${VAR} too.
      Object.assign(process.env, env);
      const { credential } = configured;
      return {
        [SERVER]: {
          url: request.serverUrl,
          ...(credential ? { auth: { session: credential, default: credential } } : {}),
        },
      };
    });
    Object.assign(fleet.processEnv, env);
    try {
      await fleet.startWorker({ timeoutMs: 45_000 });
      const dispatcher = await fleet.dispatcher();
      const calls = request.context.toolCalls ??
        SCENARIO_CALLS[request.scenario] ?? [{ name: 'test-tool', arguments: {} }];
      const settled: ToolCallOutcome[] = [];
      for (const [index, call] of calls.entries()) {
        const outcome = await dispatcher.dispatch({
          jobId: 'oauth-conformance',
          toolCallId: `${request.scenario}-${index}`,
          server: SERVER,
          tool: call.name,
          arguments: call.arguments,
          team: 'conformance',
        });
        settled.push(outcome);
      }
      return settled;
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
          (settled) => {
            outcomes.set(request.scenario, settled);
            const ok = settled.every((outcome) => outcome.status === 'ok');
            outgoing.writeHead(ok ? 200 : 502).end(JSON.stringify(settled));
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

  /**
   * Runs one client scenario of the release (or of the alpha: `suite`); its checks by id (a missing
   * expected step is a FAILURE check).
   */
  async function runScenario(scenario: string, suite = CONFORMANCE) {
    const output = join(results, scenario.replace('/', '-'));
    const run = await new Promise<{ code: number; log: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          suite,
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
    return { ...run, failed, passed, outcomes: outcomes.get(scenario) };
  }

  type ScenarioResult = Awaited<ReturnType<typeof runScenario>>;

  /**
   * The worker's calls went through (`refused` names the tools whose call Switchyard refused before
   * sending, each test saying why), each of `passed` passed, and exactly `failed` failed (each such
   * check's test says why it can never pass for Switchyard); with none failed, the suite exits 0.
   */
  function expectScenario(
    result: ScenarioResult,
    passed: string[],
    failed: string[] = [],
    refused: string[] = [],
  ): void {
    expect(Array.isArray(result.outcomes), `${String(result.outcomes)}\n${result.log}`).toBe(true);
    for (const outcome of result.outcomes as ToolCallOutcome[]) {
      if (refused.includes(outcome.tool)) expect(outcome, result.log).toMatchObject({ executed: 'no' });
      else expect(outcome, result.log).toMatchObject({ status: 'ok', executed: 'yes' });
    }
    for (const check of passed) expect(result.passed, `${check}\n${result.log}`).toContain(check);
    expect(result.failed.sort(), result.log).toEqual([...failed].sort());
    if (failed.length === 0) expect(result.code, result.log).toBe(0);
  }

  it('metadata-var3 with an operator-given refresh token: the metadata the 401 names, then the tenant’s OpenID metadata, then its token endpoint', async () => {
    expectScenario(
      await runScenario('auth/metadata-var3'),
      // The protected-resource metadata at the custom URL only the 401's resource_metadata names.
      ['prm-pathbased-requested', 'authorization-server-metadata', 'token-request', 'valid-bearer-token'],
      // The only steps missing are those of the interactive authorization code flow (registering,
      // sending a person to the authorization endpoint), which the operator went through once to get
      // the refresh token; a worker never does.
      ['authorization-request', 'client-registration'],
    );
  });

  it('client-credentials-basic: the client secret, as HTTP Basic, at the discovered token endpoint', async () => {
    expectScenario(await runScenario('auth/client-credentials-basic'), ['client-credentials-basic-auth']);
  });

  it('client-credentials-jwt: private_key_jwt, a JWT signed with the configured key (RFC 7523)', async () => {
    expectScenario(await runScenario('auth/client-credentials-jwt'), ['client-credentials-jwt-verified']);
  });

  const ENTERPRISE_FLOW = ['complete-flow-token-exchange', 'complete-flow-jwt-bearer'];

  it('cross-app-access-complete-flow: the ID token exchanged at the identity provider’s token endpoint for an ID-JAG (RFC 8693), presented as a JWT bearer grant (RFC 7523)', async () => {
    expectScenario(await runScenario('auth/cross-app-access-complete-flow'), ENTERPRISE_FLOW);
  });

  it('enterprise-managed-authorization (alpha): the same with the identity provider found from its issuer and the ID token read from a file', async () => {
    expectScenario(
      await runScenario('auth/enterprise-managed-authorization', CONFORMANCE_ALPHA),
      ENTERPRISE_FLOW,
    );
  });

  it('wif-jwt-bearer (alpha): the projected workload token, read from its file, as a JWT bearer grant', async () => {
    expectScenario(await runScenario('auth/wif-jwt-bearer', CONFORMANCE_ALPHA), ['wif-assertion-verified']);
  });

  /**
   * The DPoP scenarios grade the token request only on the authorization code grant (the scenario's
   * authorization server records the proof, and its nonce challenge, for `grant_type=authorization_code`
   * alone): a headless worker never takes that interactive grant, so those checks can never pass for
   * it. Its refresh token grant does carry the proof (the token it gets is DPoP-bound: the MCP server
   * checks the token's `cnf.jkt` against every request's proof) and answers the authorization server's
   * nonce challenge, which apps/tool-worker/test/dpop.test.ts shows against a real local server.
   */
  const DPOP_PRESENTED = ['sep-1932-client-dpop-auth-scheme', 'sep-1932-client-fresh-proof'];

  it('dpop (alpha): a DPoP-bound token, presented as `DPoP` with a fresh proof on every MCP request', async () => {
    expectScenario(await runScenario('auth/dpop', CONFORMANCE_ALPHA), DPOP_PRESENTED, [
      'sep-1932-client-token-request-proof',
    ]);
  });

  it('dpop-nonce (alpha): the MCP server’s DPoP nonce answered with a new proof', async () => {
    expectScenario(
      await runScenario('auth/dpop-nonce', CONFORMANCE_ALPHA),
      [...DPOP_PRESENTED, 'sep-1932-client-rs-nonce'],
      ['sep-1932-client-token-request-proof', 'sep-1932-client-as-nonce'],
    );
  });

  /**
   * Not a credential: SEP-2243 (2026-07-28) has a Streamable HTTP client mirror each argument whose
   * input-schema property carries `x-mcp-header` into an `Mcp-Param-<Name>` header, so proxies and load
   * balancers can route on it; values that are not plain printable ASCII go Base64 (`=?base64?…?=`).
   */
  it('http-custom-headers (alpha): each x-mcp-header argument as its Mcp-Param-* header, Base64 where needed, none for null or unannotated ones', async () => {
    expectScenario(
      await runScenario('http-custom-headers', CONFORMANCE_ALPHA),
      [
        'sep-2243-client-supports-custom-headers',
        'sep-2243-client-mirrors-designated-params',
        'sep-2243-client-encode-values',
        'sep-2243-client-base64-unsafe',
      ],
      // The scenario's second call passes `verbose: null` for a property of type boolean. Switchyard
      // checks arguments against the tool's input schema before anything is sent (docs/semantics.md)
      // and answers `invalid_arguments`, so that call never reaches the server and its header check
      // reports the call as missing.
      ['sep-2243-client-omit-null'],
      ['test_custom_headers_null'],
    );
  });

  it('http-invalid-tool-headers (alpha): a tool whose x-mcp-header declarations break the rules is left out of the catalog and never called; the valid one is', async () => {
    const result = await runScenario('http-invalid-tool-headers', CONFORMANCE_ALPHA);
    expectScenario(
      result,
      [
        'sep-2243-client-reject-invalid-tool',
        'sep-2243-x-mcp-header-not-empty',
        'sep-2243-x-mcp-header-unique',
      ],
      [],
      Object.keys(INVALID_HEADER_TOOLS),
    );
  });
});
