import { randomBytes } from 'node:crypto';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { describe, expect, it } from 'vitest';
import { Fleet } from '../support/fleet.ts';
import { startOAuthPair } from '../support/oauth-pair.ts';
import { freePort } from '../support/ports.ts';

const SERVER = 'secure';
const secret = () => randomBytes(24).toString('base64url');

/**
 * A fleet whose server `secure` is the example protected server, the worker's session and team-a each a
 * client credentials client of the example authorization server (secrets as ${VAR}, as an operator
 * writes them), and that pair started with `env`. The caller closes the fleet.
 */
async function oauthFleet(
  label: string,
  server: Record<string, unknown>,
  env: { auth?: Record<string, string>; server?: Record<string, string> },
): Promise<{ fleet: Fleet; ports: { auth: number; mcp: number }; secrets: Record<string, string> }> {
  const [auth, mcp] = await Promise.all([freePort(), freePort()]);
  const secrets = { mcp: secret(), worker: secret(), a: secret() };
  const variables = { OAUTH_WORKER_SECRET: secrets.worker, OAUTH_TEAM_A_SECRET: secrets.a };
  // The test's own parse of the config expands ${VAR} too.
  Object.assign(process.env, variables);
  const client = (clientId: string, variable: string) => ({
    type: 'client_credentials',
    clientId,
    clientSecret: `\${${variable}}`,
  });
  const fleet = new Fleet(label, () => ({
    [SERVER]: {
      url: `http://127.0.0.1:${mcp}/mcp`,
      ...server,
      auth: {
        session: client('switchyard-worker', 'OAUTH_WORKER_SECRET'),
        teams: { 'team-a': client('team-a', 'OAUTH_TEAM_A_SECRET') },
      },
    },
  }));
  Object.assign(fleet.processEnv, variables);
  try {
    await startOAuthPair(
      fleet,
      { auth, mcp },
      {
        server: { client_id: 'protected-mcp', client_secret: secrets.mcp },
        others: [
          { client_id: 'switchyard-worker', client_secret: secrets.worker },
          { client_id: 'team-a', client_secret: secrets.a },
        ],
      },
      env,
    );
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return { fleet, ports: { auth, mcp }, secrets };
}

/**
 * How the worker finds where its tokens come from, against the repo's own OAuth example servers: first
 * what the server's 401 names (RFC 9728 `resource_metadata`), before any well-known guess; and when the
 * authorization server cannot give tokens, a clear `unavailable` in bounded time, asking it rarely.
 */
describe('OAuth discovery of the worker', () => {
  it('finds protected-resource metadata published only at the URL the 401 names', async () => {
    const { fleet, ports } = await oauthFleet(
      'oauth-hint',
      {},
      { server: { RESOURCE_METADATA_PATH: '/custom/metadata/location.json' } },
    );
    try {
      // No well-known URL has the metadata: a worker that only guesses never gets a token.
      const wellKnown = await fetch(`http://127.0.0.1:${ports.mcp}/.well-known/oauth-protected-resource/mcp`);
      expect(wellKnown.status).toBe(404);

      await fleet.startWorker({ timeoutMs: 60_000 });
      const outcome = await (await fleet.dispatcher()).dispatch({
        jobId: 'oauth-hint',
        toolCallId: 'call-1',
        server: SERVER,
        tool: 'whoami',
        arguments: { label: 'hint-0' },
        team: 'team-a',
      });
      expect(outcome).toMatchObject({
        status: 'ok',
        executed: 'yes',
        structuredContent: { identity: 'team-a' },
      });
      const requests = readLedger(fleet.path('requests.jsonl'));
      // One unauthenticated probe for the server, shared by the session's identity and the team's.
      expect(requests.filter((row) => row.method === 'ping' && row.status === 401)).toHaveLength(1);
      expect(requests.filter((row) => row.label === 'hint-0').map((row) => row.status)).toEqual([200]);
    } finally {
      await fleet.close();
    }
  });

  it('a token endpoint answering 404: the call ends unavailable naming it, in bounded time, asked rarely', async () => {
    const queueTimeoutMs = 4_000;
    const { fleet, ports, secrets } = await oauthFleet(
      'oauth-404',
      { queueTimeoutMs },
      { auth: { AUTH_TOKEN_ENDPOINT_STATUS: '404' } },
    );
    try {
      const worker = await fleet.startWorker({ waitFor: [] });
      await fleet.sessionState(SERVER, 'reconnecting', 60_000);

      const sent = Date.now();
      const outcome = await (await fleet.dispatcher()).dispatch({
        jobId: 'oauth-404',
        toolCallId: 'call-1',
        server: SERVER,
        tool: 'whoami',
        arguments: { label: 'broken-0' },
        team: 'team-a',
      });
      const tookMs = Date.now() - sent;
      const tokenEndpoint = `http://127.0.0.1:${ports.auth}/token`;
      expect(outcome).toMatchObject({ status: 'unavailable', executed: 'no' });
      // The reason names the server, whose credential, and the URL that failed.
      expect(outcome.text).toContain(
        `the worker session's credential for server ${SERVER} could not be obtained: token endpoint ${tokenEndpoint} answered HTTP 404`,
      );
      // Bounded by the call's queue deadline, not by retries.
      expect(tookMs).toBeLessThan(queueTimeoutMs + 3_000);
      // The session reconnects on its own backoff, but the token endpoint is asked once per pause
      // (5 s, then 10 s…), not on every reconnect.
      const tokenRequests = readLedger(fleet.path('auth.jsonl')).filter(
        (row) => row.event === 'token_request',
      );
      expect(tokenRequests.length).toBeGreaterThanOrEqual(1);
      expect(tokenRequests.length).toBeLessThanOrEqual(2);
      expect(tokenRequests.every((row) => row.status === 404)).toBe(true);
      // Nothing of the call reached the server, and the worker's log names the problem without secrets.
      expect(readLedger(fleet.path('calls.jsonl'))).toEqual([]);
      const logs = [...worker.lines, ...worker.stderr].join('\n');
      expect(logs).toContain(`token endpoint ${tokenEndpoint} answered HTTP 404`);
      for (const value of Object.values(secrets)) expect(logs).not.toContain(value);
    } finally {
      await fleet.close();
    }
  });
});
