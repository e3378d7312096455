import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ToolCallOutcome } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { tokenCacheStore } from '@switchyard/tool-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { startOAuthPair } from '../support/oauth-pair.ts';
import { freePort } from '../support/ports.ts';

const SERVER = 'secure';
const secret = () => randomBytes(24).toString('base64url');

/**
 * Per-team credentials against a real OAuth-protected MCP server and a real authorization server
 * (oidc-provider), both started here: each call reaches the server as its own team, a revoked token is
 * re-acquired once, and a missing or rejected credential is an honest `failed` / `executed: no`.
 */
describe('per-team credentials (OAuth client credentials)', () => {
  let fleet: Deployment;
  let dispatcher: ToolCallDispatcher;
  let issuer: string;
  let call = 0;
  const secrets = {
    worker: secret(),
    a: secret(),
    b: secret(),
    r: secret(),
    alpha: secret(),
    beta: secret(),
    wrong: secret(),
    mcp: secret(),
  };
  const seenTokens = new Set<string>();
  const outcomes: ToolCallOutcome[] = [];

  const whoami = async (team: string | undefined, label: string) => {
    const outcome = await dispatcher.dispatch({
      jobId: 'team-credentials',
      toolCallId: `call-${++call}`,
      server: SERVER,
      tool: 'whoami',
      arguments: { label },
      ...(team ? { team } : {}),
    });
    outcomes.push(outcome);
    return outcome;
  };
  const requests = () => readLedger(fleet.path('requests.jsonl'));
  const calls = () => readLedger(fleet.path('calls.jsonl'));
  /** The fleet's token cache, read and written through the workers' own port (Redis keys or rows). */
  const tokens = async () => tokenCacheStore(await fleet.suiteStore());
  /** The fleet's cached token of one identity (read straight from the store, as the fleet shares it). */
  const cachedEntry = async (team: string) => {
    const raw = await (await tokens()).get({ team, issuer, server: SERVER });
    const entry = raw ? (JSON.parse(raw) as { accessToken: string; refreshToken?: string }) : undefined;
    if (entry) seenTokens.add(entry.accessToken);
    if (entry?.refreshToken) seenTokens.add(entry.refreshToken);
    return entry;
  };
  const cachedToken = async (team: string) => (await cachedEntry(team))?.accessToken;
  /** Revocation at the authorization server (RFC 7009), by the client the token was issued to. */
  const revoke = (clientId: string, clientSecret: string, token: string) =>
    fetch(`${issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }),
    });

  beforeAll(async () => {
    const [authPort, mcpPort] = await Promise.all([freePort(), freePort()]);
    issuer = `http://127.0.0.1:${authPort}`;
    const resource = `http://127.0.0.1:${mcpPort}/mcp`;
    // The config names secrets as ${VAR}: the test's own parse and the worker both expand them.
    const env = {
      CREDS_WORKER_SECRET: secrets.worker,
      CREDS_TEAM_A_SECRET: secrets.a,
      CREDS_TEAM_B_SECRET: secrets.b,
      CREDS_TEAM_R_SECRET: secrets.r,
      CREDS_ALPHA_SECRET: secrets.alpha,
      CREDS_BETA_SECRET: secrets.beta,
      CREDS_WRONG_SECRET: secrets.wrong,
    };
    Object.assign(process.env, env);
    const client = (clientId: string, variable: string) => ({
      type: 'client_credentials',
      clientId,
      clientSecret: `\${${variable}}`,
    });
    fleet = new Deployment(
      'creds',
      (dir) => ({
        [SERVER]: {
          url: resource,
          auth: {
            // The worker's own identity: the handshake, tools/list and pings carry it, never a team's call.
            session: client('switchyard-worker', 'CREDS_WORKER_SECRET'),
            teams: {
              'team-a': client('team-a', 'CREDS_TEAM_A_SECRET'),
              'team-b': { ...client('team-b', 'CREDS_TEAM_B_SECRET'), issuer },
              // An operator-given refresh token, mounted as a secret file.
              'team-r': {
                type: 'refresh_token',
                clientId: 'team-r',
                clientSecret: `\${CREDS_TEAM_R_SECRET}`,
                refreshTokenFile: `${dir}/team-r.refresh-token`,
              },
              // A client the authorization server knows, with the wrong secret: no token is issued.
              'team-w': client('team-a', 'CREDS_WRONG_SECRET'),
              // A static token the server does not accept: refused twice, never retried further.
              'team-s': { type: 'header', value: 'Bearer not-a-valid-token' },
              // Teams of the deployment's API (support/deployment.ts); "searchers" has no credential.
              alpha: client('alpha', 'CREDS_ALPHA_SECRET'),
              beta: client('beta', 'CREDS_BETA_SECRET'),
            },
          },
        },
      }),
      {
        // The API's teams; "searchers" may use every tool here but has no credential for this server.
        teams: Object.fromEntries(
          (['alpha', 'beta', 'searchers'] as const).map((team) => [team, { apiKeys: [TEAM_KEYS[team]] }]),
        ),
      },
    );
    Object.assign(fleet.processEnv, env);
    await startOAuthPair(
      fleet,
      { auth: authPort, mcp: mcpPort },
      {
        server: { client_id: 'protected-mcp', client_secret: secrets.mcp },
        others: [
          { client_id: 'switchyard-worker', client_secret: secrets.worker },
          { client_id: 'team-a', client_secret: secrets.a },
          { client_id: 'team-b', client_secret: secrets.b },
          { client_id: 'alpha', client_secret: secrets.alpha },
          { client_id: 'beta', client_secret: secrets.beta },
        ],
      },
      {
        auth: {
          AUTH_REFRESH_CLIENTS: JSON.stringify([
            {
              client_id: 'team-r',
              client_secret: secrets.r,
              refresh_token_file: fleet.path('team-r.refresh-token'),
            },
          ]),
        },
      },
    );
    await Promise.all([fleet.startWorker(), fleet.startOrchestrator('o-creds')]);
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('each call reaches the server under its own team, and team B never carries team A’s token', async () => {
    const results = await Promise.all([
      ...Array.from({ length: 4 }, (_, index) => whoami('team-a', `a-${index}`)),
      ...Array.from({ length: 4 }, (_, index) => whoami('team-b', `b-${index}`)),
    ]);
    expect(results.map((outcome) => [outcome.status, outcome.structuredContent?.identity])).toEqual([
      ...Array(4).fill(['ok', 'team-a']),
      ...Array(4).fill(['ok', 'team-b']),
    ]);
    const ran = calls();
    for (const label of ['a-0', 'a-1', 'a-2', 'a-3']) {
      expect(ran.filter((row) => row.label === label).map((row) => row.identity)).toEqual(['team-a']);
    }
    for (const label of ['b-0', 'b-1', 'b-2', 'b-3']) {
      expect(ran.filter((row) => row.label === label).map((row) => row.identity)).toEqual(['team-b']);
    }
    // The server's request log: the token digest of every request, and whose it was.
    const log = requests();
    const digestsOf = (identity: string) =>
      new Set(log.filter((row) => row.identity === identity).map((row) => row.token));
    const teamA = digestsOf('team-a');
    const teamB = digestsOf('team-b');
    expect(teamA.size).toBeGreaterThan(0);
    expect(teamB.size).toBeGreaterThan(0);
    const bCalls = log.filter((row) => String(row.label ?? '').startsWith('b-'));
    expect(bCalls.length).toBeGreaterThanOrEqual(4);
    for (const row of bCalls) {
      expect(row.identity).toBe('team-b');
      expect(teamA.has(row.token)).toBe(false);
    }
    // The session's own requests carry the worker's identity, never a team's.
    const sessionRows = log.filter((row) => row.method === 'initialize' || row.method === 'tools/list');
    expect(sessionRows.length).toBeGreaterThan(0);
    expect(new Set(sessionRows.map((row) => row.identity))).toEqual(new Set(['switchyard-worker']));
    // Cached once per identity and shared: distinct tokens, keyed by (team, issuer, server).
    const [tokenA, tokenB] = await Promise.all([cachedToken('team-a'), cachedToken('team-b')]);
    expect(tokenA).toBeTruthy();
    expect(tokenB).toBeTruthy();
    expect(tokenA).not.toBe(tokenB);
    await cachedToken('_session');
  });

  it('a revoked token is refused once, re-acquired, and the call runs exactly once', async () => {
    const revoked = await cachedToken('team-a');
    expect(revoked).toBeTruthy();
    // Revocation at the authorization server (RFC 7009), by the client the token was issued to.
    expect((await revoke('team-a', secrets.a, revoked as string)).status).toBe(200);
    const issuedToA = () =>
      readLedger(fleet.path('auth.jsonl')).filter(
        (row) => row.event === 'issued' && row.client_id === 'team-a',
      );
    const issuedBefore = issuedToA().length;

    const outcome = await whoami('team-a', 'a-after-revoke');
    expect(outcome).toMatchObject({
      status: 'ok',
      executed: 'yes',
      structuredContent: { identity: 'team-a' },
    });
    expect(calls().filter((row) => row.label === 'a-after-revoke')).toHaveLength(1);
    const attempts = requests().filter((row) => row.label === 'a-after-revoke');
    expect(attempts.map((row) => row.status)).toEqual([401, 200]);
    expect(attempts[1]?.identity).toBe('team-a');
    const fresh = await cachedToken('team-a');
    expect(fresh).not.toBe(revoked);
    // One re-acquire, not a storm.
    expect(issuedToA()).toHaveLength(issuedBefore + 1);
  });

  it('an operator-given refresh token: the team reaches the server as itself, renewed with the rotated token', async () => {
    const operatorToken = readFileSync(fleet.path('team-r.refresh-token'), 'utf8').trim();
    seenTokens.add(operatorToken);
    const first = await whoami('team-r', 'r-0');
    expect(first).toMatchObject({ status: 'ok', structuredContent: { identity: 'team-r' } });
    const entry = await cachedEntry('team-r');
    // The authorization server rotates refresh tokens: the operator's is spent, the new one is cached.
    expect(entry?.refreshToken).toBeTruthy();
    expect(entry?.refreshToken).not.toBe(operatorToken);

    // Due for renewal (as when 80% of its lifetime has passed): the next call refreshes first, with the
    // rotated refresh token — the spent operator one would be refused, and its grant revoked.
    await (await tokens()).expireIfToken(
      { team: 'team-r', issuer, server: SERVER },
      String(entry?.accessToken),
    );
    expect(await cachedEntry('team-r')).toMatchObject({ accessToken: entry?.accessToken, renewAt: 0 });
    const second = await whoami('team-r', 'r-1');
    expect(second).toMatchObject({
      status: 'ok',
      executed: 'yes',
      structuredContent: { identity: 'team-r' },
    });
    expect(
      requests()
        .filter((row) => row.label === 'r-1')
        .map((row) => row.status),
    ).toEqual([200]);
    const renewed = await cachedEntry('team-r');
    expect(renewed?.accessToken).not.toBe(entry?.accessToken);
    expect(renewed?.refreshToken).not.toBe(entry?.refreshToken);

    // Revoking the access token revokes its grant's refresh tokens too: nothing left to renew with, so
    // the call ends at once (one 401, one refused refresh), not in a retry storm.
    expect((await revoke('team-r', secrets.r, renewed?.accessToken as string)).status).toBe(200);
    const third = await whoami('team-r', 'r-2');
    expect(third).toMatchObject({ status: 'failed', executed: 'no' });
    expect(third.text).toContain("Team team-r's credential for server secure could not be obtained");
    expect(
      requests()
        .filter((row) => row.label === 'r-2')
        .map((row) => row.status),
    ).toEqual([401]);
    expect(calls().filter((row) => row.label === 'r-2')).toEqual([]);
  });

  it('a team without a credential ends failed / executed no, and nothing reaches the server', async () => {
    const outcome = await whoami('team-c', 'c-0');
    expect(outcome).toMatchObject({ status: 'failed', executed: 'no' });
    expect(outcome.text).toMatch(/^Team team-c has no credential for server secure; .* was not run\.$/);
    const anonymous = await whoami(undefined, 'anonymous-0');
    expect(anonymous).toMatchObject({ status: 'failed', executed: 'no' });
    expect(anonymous.text).toContain('The call names no team and server secure has no default credential');
    expect(requests().filter((row) => row.label === 'c-0' || row.label === 'anonymous-0')).toEqual([]);
  });

  it('a credential the authorization server or the server rejects is a clear outcome, not a retry storm', async () => {
    const unobtainable = await whoami('team-w', 'w-0');
    expect(unobtainable).toMatchObject({ status: 'failed', executed: 'no', attempts: 0 });
    expect(unobtainable.text).toContain("Team team-w's credential for server secure could not be obtained");
    expect(requests().filter((row) => row.label === 'w-0')).toEqual([]);

    const rejected = await whoami('team-s', 's-0');
    expect(rejected).toMatchObject({ status: 'failed', executed: 'no', attempts: 1 });
    expect(rejected.text).toContain("Server secure rejected team team-s's credential");
    // A static secret has nothing fresher to try: one request, refused, and no retry.
    expect(
      requests()
        .filter((row) => row.label === 's-0')
        .map((row) => row.status),
    ).toEqual([401]);
    expect(calls().filter((row) => row.label === 's-0')).toEqual([]);
  });

  it('a job runs as its team end to end: the orchestrator puts the team on each call', async () => {
    const batch = (label: string) => ({
      kind: 'batch',
      calls: [{ tool: `${SERVER}__whoami`, arguments: { label } }],
    });
    const submitted = await Promise.all([
      fleet.api('alpha').submit(batch('job-alpha')),
      fleet.api('beta').submit(batch('job-beta')),
      fleet.api('searchers').submit(batch('job-searchers')),
    ]);
    expect(submitted.map((answer) => answer.status)).toEqual([201, 201, 201]);
    const [alpha, beta, searchers]: Json[] = await Promise.all(
      (['alpha', 'beta', 'searchers'] as const).map((team, index) =>
        fleet.api(team).finished(submitted[index]?.body.id, 90_000),
      ),
    );
    const outcomeOf = (job: Json) => job.toolCalls[0].outcome;
    expect(outcomeOf(alpha)).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(outcomeOf(beta)).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(outcomeOf(searchers)).toMatchObject({ status: 'failed', executed: 'no' });
    expect(outcomeOf(searchers).text).toContain('Team searchers has no credential for server secure');
    outcomes.push(outcomeOf(alpha), outcomeOf(beta), outcomeOf(searchers));
    // The server saw each job's call under its team's identity, and the team without one not at all.
    const ran = calls();
    expect(ran.filter((row) => row.label === 'job-alpha').map((row) => row.identity)).toEqual(['alpha']);
    expect(ran.filter((row) => row.label === 'job-beta').map((row) => row.identity)).toEqual(['beta']);
    expect(requests().filter((row) => row.label === 'job-searchers')).toEqual([]);
    await Promise.all([cachedToken('alpha'), cachedToken('beta')]);
  });

  it('no token or client secret appears in the worker’s logs or in any outcome', async () => {
    await cachedToken('team-b');
    expect(seenTokens.size).toBeGreaterThanOrEqual(4);
    // The worker's and the orchestrator's logs (the test servers are not Switchyard's).
    const logs = fleet.group.processes
      .filter((process) => /^(worker|orchestrator)/.test(process.name))
      .flatMap((process) => [...process.lines, ...process.stderr])
      .join('\n');
    const recorded = JSON.stringify(outcomes);
    expect(logs).toContain('tool call finished');
    expect(logs).toContain('orchestrator listening');
    for (const value of [...seenTokens, ...Object.values(secrets), 'not-a-valid-token']) {
      expect(logs).not.toContain(value);
      expect(recorded).not.toContain(value);
    }
  });
});
