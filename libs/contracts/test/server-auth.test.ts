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

  it('keys cached tokens by team, issuer and server', () => {
    const a = redisKeys.oauthToken('sy', 'team-a', 'https://auth.example.com:8443/tenant', 'docs');
    expect(a).toBe('sy:oauth-token:team-a:https%3A%2F%2Fauth.example.com%3A8443%2Ftenant:docs');
    expect(redisKeys.oauthToken('sy', 'team-b', 'https://auth.example.com:8443/tenant', 'docs')).not.toBe(a);
    expect(redisKeys.oauthToken('sy', 'team-a', 'https://other.example.com', 'docs')).not.toBe(a);
  });
});
