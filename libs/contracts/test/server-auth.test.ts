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
});
