import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadConfig,
  ORCHESTRATOR_UNUSED_SECRETS,
  parseConfig,
  WORKER_UNUSED_SECRETS,
} from '../src/index.ts';

const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('config', () => {
  it('applies the defaults of docs/configuration.md', () => {
    const config = parseConfig({ servers: { docs: { command: 'node', args: ['docs.js'] } } });
    expect(config.servers.docs).toMatchObject({
      transport: 'stdio',
      concurrency: 1,
      timeoutMs: 15_000,
      retry: { attempts: 3, backoffMs: 200 },
      idempotent: [],
      nonIdempotent: [],
      handshakeTimeoutMs: 30_000,
      maxTimeoutMs: 60_000,
    });
    expect(config.teams).toEqual({});
    expect(config.worker.heartbeatMs).toBe(2_000);
  });

  it('resolves maxTimeoutMs from the own timeoutMs of a server unless it is given', () => {
    const config = parseConfig({
      servers: {
        quick: { command: 'node', timeoutMs: 2_000 },
        capped: { command: 'node', timeoutMs: 2_000, maxTimeoutMs: 5_000 },
      },
    });
    expect(config.servers.quick?.maxTimeoutMs).toBe(8_000);
    expect(config.servers.capped?.maxTimeoutMs).toBe(5_000);
  });

  it('infers http from a url and expands ${VAR} in headers', () => {
    const config = parseConfig(
      {
        servers: {
          docs: { url: 'http://docs:8080/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
        },
      },
      { DOCS_TOKEN: 's3cret' },
    );
    expect(config.servers.docs).toMatchObject({
      transport: 'http',
      headers: { Authorization: 'Bearer s3cret' },
    });
  });

  it('uses ${VAR:-default} when the variable is unset', () => {
    const config = parseConfig({ servers: { docs: { command: '${DOCS_CMD:-node}' } } }, {});
    expect(config.servers.docs).toMatchObject({ command: 'node' });
  });

  it('names the key whose environment variable is missing', () => {
    const error = errorOf(() =>
      parseConfig(
        { servers: { docs: { url: 'http://x/mcp', headers: { Authorization: 'Bearer ${NOPE}' } } } },
        {},
      ),
    );
    expect(error.key).toBe('servers.docs.headers.Authorization');
    expect(error.message).toContain('NOPE is not set');
  });

  it.each([
    [{ servers: { Docs: { command: 'x' } } }, 'servers.Docs', 'server names must match'],
    [{ servers: { docs: { command: 'x', concurency: 2 } } }, 'servers.docs', 'concurency'],
    [{ servers: { docs: { command: 'x', concurrency: 0 } } }, 'servers.docs.concurrency', '>=1'],
    [{ servers: { docs: { transport: 'http' } } }, 'servers.docs.url', ''],
    [{ servers: { docs: { transport: 'carrier-pigeon', command: 'x' } } }, 'servers.docs.transport', ''],
    [
      { servers: { docs: { command: 'x', idempotent: ['a'], nonIdempotent: ['a'] } } },
      'servers.docs.idempotent',
      'both',
    ],
    [
      { servers: { docs: { command: 'x', timeoutMs: 1000, maxTimeoutMs: 10 } } },
      'servers.docs.maxTimeoutMs',
      'at least',
    ],
    [{ servers: {}, teams: { a: { apiKeys: ['short'] } } }, 'teams.a.apiKeys.0', '16 characters'],
    [{ servers: {}, wrker: {} }, '', 'wrker'],
  ])('rejects %j naming %s', (raw, key, fragment) => {
    const error = errorOf(() => parseConfig(raw, {}));
    expect(error.key).toBe(key);
    expect(error.message).toContain(fragment);
  });

  it('reports YAML syntax errors and unreadable files with the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-config-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'servers: [unclosed');
    expect(errorOf(() => loadConfig(bad)).message).toMatch(/bad\.yaml: .*invalid YAML/);
    expect(errorOf(() => loadConfig(join(dir, 'missing.yaml'))).message).toContain('cannot read config file');
  });

  it('does not let an expanded value inject YAML structure', () => {
    const config = parseConfig({ servers: { docs: { command: '${CMD}' } } }, { CMD: 'node\nargs: [evil]' });
    expect(config.servers.docs).toMatchObject({ command: 'node\nargs: [evil]', args: [] });
  });
});

describe('secrets a process does not use', () => {
  const raw = {
    servers: { docs: { url: 'http://docs/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } } },
    teams: { search: { apiKeys: ['${SEARCH_TEAM_KEY}'] } },
  };

  it('lets a worker start without the team keys, but not without its server tokens', () => {
    const config = parseConfig(raw, { DOCS_TOKEN: 'token-123' }, undefined, {
      unusedSecrets: WORKER_UNUSED_SECRETS,
    });
    expect(config.servers.docs).toMatchObject({ headers: { Authorization: 'Bearer token-123' } });
    expect(errorOf(() => parseConfig(raw, {}, undefined, { unusedSecrets: WORKER_UNUSED_SECRETS })).key).toBe(
      'servers.docs.headers.Authorization',
    );
  });

  it('lets an orchestrator start without server tokens, but not without the team keys', () => {
    const env = { SEARCH_TEAM_KEY: 'search-key-0000000001' };
    const config = parseConfig(raw, env, undefined, { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS });
    expect(config.teams.search?.apiKeys).toEqual(['search-key-0000000001']);
    expect(
      errorOf(() => parseConfig(raw, {}, undefined, { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS })).key,
    ).toBe('teams.search.apiKeys.0');
  });
});
