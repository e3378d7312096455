import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ORCHESTRATOR_UNUSED_SECRETS, parseConfig, redisKeys, WORKER_UNUSED_SECRETS } from '../src/index.ts';
import { errorOf } from './config-error.ts';

const withAuth = (auth: unknown, extra: Record<string, unknown> = {}) => ({
  servers: { docs: { url: 'http://docs/mcp', auth, ...extra } },
});

describe('servers.<name>.auth', () => {
  it('reads each team’s credential, secrets expanded from the environment', () => {
    const config = parseConfig(
      withAuth({
        session: { type: 'client_credentials', clientId: 'worker', clientSecret: '${WORKER_SECRET}' },
        default: { type: 'header', value: 'Bearer ${SHARED_TOKEN}' },
        teams: {
          'team-a': {
            type: 'client_credentials',
            clientId: 'team-a',
            clientSecret: '${TEAM_A_SECRET}',
            issuer: 'https://auth.example.com',
          },
          'team-b': { type: 'refresh_token', clientId: 'team-b', refreshTokenFile: '/run/secrets/team-b' },
        },
      }),
      { WORKER_SECRET: 'w-secret', SHARED_TOKEN: 'shared', TEAM_A_SECRET: 'a-secret' },
    );
    const docs = config.servers.docs;
    expect(docs?.transport === 'http' && docs.auth).toEqual({
      session: { type: 'client_credentials', clientId: 'worker', clientSecret: 'w-secret' },
      default: { type: 'header', header: 'Authorization', value: 'Bearer shared' },
      teams: {
        'team-a': {
          type: 'client_credentials',
          clientId: 'team-a',
          clientSecret: 'a-secret',
          issuer: 'https://auth.example.com',
        },
        'team-b': { type: 'refresh_token', clientId: 'team-b', refreshTokenFile: '/run/secrets/team-b' },
      },
    });
  });

  it('names the key of a bad credential', () => {
    const bad = (auth: unknown) => errorOf(() => parseConfig(withAuth(auth), {}));
    expect(bad({ teams: { 'team-a': { type: 'password' } } }).key).toBe(
      'servers.docs.auth.teams.team-a.type',
    );
    expect(bad({ teams: { 'team-a': { type: 'client_credentials', clientId: 'a' } } }).key).toBe(
      'servers.docs.auth.teams.team-a.clientSecret',
    );
    expect(bad({ teams: { 'team-a': { type: 'refresh_token', clientId: 'a' } } }).reason).toContain(
      'exactly one of refreshToken and refreshTokenFile',
    );
    expect(bad({ teams: { 'Team A': { type: 'header', value: 'x' } } }).reason).toContain(
      'team names must match',
    );
    expect(bad({ default: { type: 'header', header: 'Bad Header', value: 'x' } }).key).toBe(
      'servers.docs.auth.default.header',
    );
    expect(
      bad({
        teams: {
          'team-a': { type: 'client_credentials', clientId: 'a', clientSecret: 's', issuer: 'ftp://x' },
        },
      }).key,
    ).toBe('servers.docs.auth.teams.team-a.issuer');
  });

  it('gives a stdio server per-team environments, and refuses an HTTP credential there', () => {
    const config = parseConfig(
      {
        servers: { local: { command: 'node', auth: { teams: { 'team-a': { env: { KEY: '${A_KEY}' } } } } } },
      },
      { A_KEY: 'a-key' },
    );
    const local = config.servers.local;
    expect(local?.transport === 'stdio' && local.auth).toEqual({
      teams: { 'team-a': { env: { KEY: 'a-key' } } },
      maxSessions: 8,
      idleCloseMs: 300_000,
    });
    const error = errorOf(() =>
      parseConfig(
        {
          servers: {
            local: { command: 'node', auth: { teams: { 'team-a': { type: 'header', value: 'x' } } } },
          },
        },
        {},
      ),
    );
    expect(error.key).toBe('servers.local.auth.teams.team-a.env');
  });

  it('is a secret the orchestrator never needs, and one the worker does', () => {
    const raw = withAuth({ teams: { 'team-a': { type: 'header', value: 'Bearer ${TEAM_A_TOKEN}' } } });
    expect(() =>
      parseConfig(raw, {}, undefined, { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS }),
    ).not.toThrow();
    expect(errorOf(() => parseConfig(raw, {}, undefined, { unusedSecrets: WORKER_UNUSED_SECRETS })).key).toBe(
      'servers.docs.auth.teams.team-a.value',
    );
  });

  it('reads a private_key_jwt credential: the PEM from the environment, checked against its algorithm', () => {
    const pem = (type: 'rsa' | 'ec') =>
      (type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ec', { namedCurve: 'P-256' })
      ).privateKey
        .export({ type: 'pkcs8', format: 'pem' })
        .toString();
    const [rsa, ec] = [pem('rsa'), pem('ec')];
    const jwt = (extra: Record<string, unknown>) =>
      withAuth({ teams: { 'team-a': { type: 'private_key_jwt', clientId: 'team-a', ...extra } } });
    const parsed = (extra: Record<string, unknown>, env: Record<string, string>) => {
      const docs = parseConfig(jwt(extra), env).servers.docs;
      return docs?.transport === 'http' ? docs.auth?.teams['team-a'] : undefined;
    };
    expect(parsed({ privateKey: '${TEAM_A_KEY}' }, { TEAM_A_KEY: rsa })).toEqual({
      type: 'private_key_jwt',
      clientId: 'team-a',
      privateKey: rsa.trim(),
      algorithm: 'RS256',
    });
    // A one-line secret with \n escapes is read as the PEM it spells.
    expect(
      parsed({ privateKey: '${TEAM_A_KEY}', algorithm: 'ES256' }, { TEAM_A_KEY: ec.replaceAll('\n', '\\n') }),
    ).toMatchObject({ privateKey: ec.trim(), algorithm: 'ES256' });

    const bad = (extra: Record<string, unknown>, env: Record<string, string>) =>
      errorOf(() => parseConfig(jwt(extra), env));
    const notPem = bad({ privateKey: '${TEAM_A_KEY}' }, { TEAM_A_KEY: 'not a key' });
    expect([notPem.key, notPem.reason]).toEqual([
      'servers.docs.auth.teams.team-a.privateKey',
      'not a PEM private key (-----BEGIN PRIVATE KEY----- …)',
    ]);
    const mismatch = bad({ privateKey: '${TEAM_A_KEY}', algorithm: 'ES256' }, { TEAM_A_KEY: rsa });
    expect([mismatch.key, mismatch.reason]).toEqual([
      'servers.docs.auth.teams.team-a.algorithm',
      'ES256 needs an EC P-256 key; privateKey is rsa',
    ]);
    expect(bad({ privateKey: rsa, algorithm: 'HS256' }, {}).key).toBe(
      'servers.docs.auth.teams.team-a.algorithm',
    );
    expect(bad({ algorithm: 'RS256' }, {}).key).toBe('servers.docs.auth.teams.team-a.privateKey');
    // The orchestrator never reads the key: left unexpanded there, it is not checked.
    expect(() =>
      parseConfig(jwt({ privateKey: '${TEAM_A_KEY}' }), {}, undefined, {
        unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS,
      }),
    ).not.toThrow();
  });

  it('keys cached tokens by team, issuer and server', () => {
    const a = redisKeys.oauthToken('sy', 'team-a', 'https://auth.example.com:8443/tenant', 'docs');
    expect(a).toBe('sy:oauth-token:team-a:https%3A%2F%2Fauth.example.com%3A8443%2Ftenant:docs');
    expect(redisKeys.oauthToken('sy', 'team-b', 'https://auth.example.com:8443/tenant', 'docs')).not.toBe(a);
    expect(redisKeys.oauthToken('sy', 'team-a', 'https://other.example.com', 'docs')).not.toBe(a);
  });
  it('reads a workload identity and an enterprise-managed credential, DPoP on any OAuth credential', () => {
    const session = {
      type: 'workload_identity',
      clientId: 'worker',
      assertionFile: '/var/run/secrets/tokens/mcp',
      dpop: true,
    };
    const enterprise = { type: 'enterprise_managed_authorization', clientId: 'mcp-client' };
    const docs = parseConfig(
      withAuth({
        session,
        teams: {
          'team-a': {
            ...enterprise,
            clientSecret: '${MCP_SECRET}',
            idp: { issuer: 'https://idp.example.com', clientId: 'idp-client', clientSecret: '${IDP_SECRET}' },
            idToken: '${TEAM_A_ID_TOKEN}',
          },
          'team-b': { type: 'refresh_token', clientId: 'b', refreshToken: '${B_REFRESH}', dpop: true },
        },
      }),
      {
        MCP_SECRET: 'mcp-s',
        IDP_SECRET: 'idp-s',
        TEAM_A_ID_TOKEN: ' eyJhbGc.eyJzdWIi.c2ln\n',
        B_REFRESH: 'rt',
      },
    ).servers.docs;
    const auth = docs?.transport === 'http' ? docs.auth : undefined;
    expect(auth?.session).toEqual(session);
    expect(auth?.teams).toEqual({
      'team-a': {
        ...enterprise,
        clientSecret: 'mcp-s',
        idp: { issuer: 'https://idp.example.com', clientId: 'idp-client', clientSecret: 'idp-s' },
        // Trimmed: a secret's trailing line break is not part of it.
        idToken: 'eyJhbGc.eyJzdWIi.c2ln',
      },
      'team-b': { type: 'refresh_token', clientId: 'b', refreshToken: 'rt', dpop: true },
    });
  });

  it('names the key of a bad workload identity, enterprise-managed or DPoP setting', () => {
    const team = (credential: Record<string, unknown>, env: Record<string, string> = {}) =>
      errorOf(() => parseConfig(withAuth({ teams: { 'team-a': credential } }), env));
    const workload = { type: 'workload_identity', clientId: 'w' };
    const enterprise = {
      type: 'enterprise_managed_authorization',
      clientId: 'c',
      clientSecret: 's',
      idp: { issuer: 'https://idp.example.com', clientId: 'i' },
      idToken: 'a.b.c',
    };
    const cases: [Record<string, unknown>, Record<string, string>, string, string][] = [
      [workload, {}, 'assertionFile', 'give exactly one of assertion and assertionFile'],
      [{ ...workload, assertion: 'a.b.c', assertionFile: '/t' }, {}, 'assertionFile', 'give exactly one'],
      [{ ...workload, assertionFile: 'tokens/mcp' }, {}, 'assertionFile', 'must be an absolute path'],
      [{ ...workload, assertion: '${W_TOKEN}' }, { W_TOKEN: 'not a jwt' }, 'assertion', 'not a JWT'],
      [{ ...workload, assertionFile: '/t', clientSecret: 's' }, {}, '', 'clientSecret'],
      [
        { ...enterprise, idToken: undefined },
        {},
        'idTokenFile',
        'give exactly one of idToken and idTokenFile',
      ],
      [{ ...enterprise, clientSecret: undefined }, {}, 'clientSecret', ''],
      [
        { ...enterprise, idp: { ...enterprise.idp, tokenEndpoint: 'https://idp.example.com/token' } },
        {},
        'idp.tokenEndpoint',
        'give exactly one of issuer and tokenEndpoint',
      ],
      [{ ...enterprise, idp: { issuer: 'https://idp.example.com' } }, {}, 'idp.clientId', ''],
      [{ ...enterprise, idp: { ...enterprise.idp, issuer: 'idp' } }, {}, 'idp.issuer', ''],
      [{ ...enterprise, dpop: 'yes' }, {}, 'dpop', ''],
      [{ type: 'header', value: 'x', dpop: true }, {}, '', 'dpop'],
    ];
    for (const [credential, env, key, reason] of cases) {
      const error = team(credential, env);
      const where = ['servers.docs.auth.teams.team-a', key].filter(Boolean).join('.');
      expect([error.key, error.reason.includes(reason)], JSON.stringify(credential)).toEqual([where, true]);
    }
    // The orchestrator never reads them: left unexpanded there, they are not checked.
    expect(() =>
      parseConfig(
        withAuth({ teams: { 'team-a': { ...workload, assertion: '${W_TOKEN}' } } }),
        {},
        undefined,
        { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS },
      ),
    ).not.toThrow();
  });

  it('keys a DPoP-bound token by the key it is bound to as well', () => {
    const bearer = redisKeys.oauthToken('sy', 'team-a', 'https://auth.example.com', 'docs');
    const bound = redisKeys.oauthToken('sy', 'team-a', 'https://auth.example.com', 'docs', 'jkt-1');
    expect(bound).toBe(`${bearer}:dpop:jkt-1`);
    expect(redisKeys.oauthToken('sy', 'team-a', 'https://auth.example.com', 'docs', 'jkt-2')).not.toBe(bound);
  });
});
