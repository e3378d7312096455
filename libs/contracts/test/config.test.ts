import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, ORCHESTRATOR_UNUSED_SECRETS, parseConfig, WORKER_UNUSED_SECRETS } from '../src/index.ts';
import { errorOf } from './config-error.ts';

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
      protocol: 'auto',
      maxTimeoutMs: 60_000,
      tasks: { mode: 'auto', maxDurationMs: 3_600_000 },
      elicitation: { answerWithDefaults: false },
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
    [{ servers: { docs: { command: 'x', tasks: { mode: 'always' } } } }, 'servers.docs.tasks.mode', ''],
    [
      { servers: { docs: { command: 'x', elicitation: { answerWithDefaults: 'yes' } } } },
      'servers.docs.elicitation.answerWithDefaults',
      'boolean',
    ],
    [{ servers: { docs: { command: 'x', protocol: '2024-11-05' } } }, 'servers.docs.protocol', 'auto'],
    [
      { servers: { docs: { transport: 'sse', url: 'http://x/sse', protocol: '2026-07-28' } } },
      'servers.docs.protocol',
      'SSE',
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

  it("names the key of a team webhook URL a worker cannot expand (it never throws the URL parser's TypeError)", () => {
    const unexpanded = {
      servers: {},
      teams: { a: { apiKeys: ['${A_KEY_0000000001}'], webhooks: [{ url: '${HOOK_URL}' }] } },
    };
    const error = errorOf(() =>
      parseConfig(unexpanded, {}, undefined, { unusedSecrets: WORKER_UNUSED_SECRETS }),
    );
    expect(error.key).toBe('teams.a.webhooks.0.url');
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

describe('webhook and quota keys of a team', () => {
  const KEY = 'a-team-key-0000000000000001';
  const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const team = (extra: Record<string, unknown>) => ({
    servers: {},
    teams: { a: { apiKeys: [KEY], ...extra } },
  });

  it('accepts callsPerMinute, a signing secret and team webhooks with default events', () => {
    const config = parseConfig(
      team({ callsPerMinute: 120, webhookSecret: SECRET, webhooks: [{ url: 'https://hooks.example/x' }] }),
      {},
    );
    expect(config.teams.a).toMatchObject({
      callsPerMinute: 120,
      webhooks: [
        {
          url: 'https://hooks.example/x',
          events: ['job.succeeded', 'job.completed_with_errors', 'job.failed', 'job.cancelled'],
        },
      ],
    });
    expect(config.orchestrator.webhooks).toEqual({
      attempts: 8,
      backoffMs: 5_000,
      timeoutMs: 10_000,
      concurrency: 10,
      allowPrivateNetworks: [],
    });
  });

  it.each([
    [team({ callsPerMinute: 0 }), 'teams.a.callsPerMinute', '>=1'],
    [team({ webhookSecret: 'hunter2' }), 'teams.a.webhookSecret', 'whsec_'],
    [team({ webhookSecret: 'whsec_c2hvcnQ=' }), 'teams.a.webhookSecret', '24 to 64 bytes'],
    [team({ webhooks: [{ url: 'https://hooks.example/x' }] }), 'teams.a.webhooks.0.secret', 'webhookSecret'],
    [team({ webhookSecret: SECRET, webhooks: [{ url: 'ftp://x/y' }] }), 'teams.a.webhooks.0.url', ''],
    [
      team({ webhookSecret: SECRET, webhooks: [{ url: 'https://user:pw@hooks.example/x' }] }),
      'teams.a.webhooks.0.url',
      'credentials',
    ],
    [
      team({ webhookSecret: SECRET, webhooks: [{ url: 'https://hooks.example/x', events: ['job.done'] }] }),
      'teams.a.webhooks.0.events.0',
      '',
    ],
    [{ servers: {}, orchestrator: { webhooks: { attempts: 0 } } }, 'orchestrator.webhooks.attempts', '>=1'],
    [
      { servers: {}, orchestrator: { webhooks: { allowPrivateNetworks: ['10.1.0.0/16', '10.2.0.1'] } } },
      'orchestrator.webhooks.allowPrivateNetworks.1',
      'not a CIDR',
    ],
    [
      {
        servers: {},
        orchestrator: { mcp: { allowedOrigins: ['https://agents.example', 'https://x.example/'] } },
      },
      'orchestrator.mcp.allowedOrigins.1',
      'not an origin',
    ],
    [{ servers: {}, orchestrator: { mcp: { allowedOrigin: [] } } }, 'orchestrator.mcp', 'allowedOrigin'],
    [{ servers: {}, toolCalls: { keepCompletedSeconds: 59 } }, 'toolCalls.keepCompletedSeconds', '>=60'],
    [{ servers: {}, toolCalls: { keepFailedSeconds: 'a day' } }, 'toolCalls.keepFailedSeconds', 'number'],
    [{ servers: {}, toolCalls: { keepCompletedCount: 1000 } }, 'toolCalls', 'keepCompletedCount'],
    [
      { servers: {}, orchestrator: { maxDeadlineMs: 3_600_000, defaultLimits: { deadlineMs: 3_600_001 } } },
      'orchestrator.defaultLimits.deadlineMs',
      'orchestrator.maxDeadlineMs',
    ],
  ])('rejects %j naming %s', (raw, key, fragment) => {
    const error = errorOf(() => parseConfig(raw, {}));
    expect(error.key).toBe(key);
    expect(error.message).toContain(fragment);
  });

  describe('toolCalls retention', () => {
    it('keeps finished calls a day (failed ones a week), as long as the longest allowed deadline', () => {
      const config = parseConfig({ servers: {} }, {});
      expect(config.toolCalls).toEqual({ keepCompletedSeconds: 86_400, keepFailedSeconds: 604_800 });
      expect(config.orchestrator.maxDeadlineMs).toBe(86_400_000);
    });

    it('may be shortened together with the longest deadline a job may ask for', () => {
      const config = parseConfig(
        {
          servers: {},
          orchestrator: { maxDeadlineMs: 3_600_000 },
          toolCalls: { keepCompletedSeconds: 3_600, keepFailedSeconds: 7_200 },
        },
        {},
      );
      expect(config.toolCalls).toEqual({ keepCompletedSeconds: 3_600, keepFailedSeconds: 7_200 });
    });

    it('refuses a retention shorter than orchestrator.maxDeadlineMs, naming both keys', () => {
      // The default maxDeadlineMs (24 h) is longer than an hour's retention.
      const error = errorOf(() =>
        parseConfig({ servers: {}, toolCalls: { keepCompletedSeconds: 3_600 } }, {}),
      );
      expect(error.key).toBe('toolCalls.keepCompletedSeconds');
      expect(error.message).toContain('orchestrator.maxDeadlineMs (86400000 ms = 86400 s)');
      const failed = errorOf(() =>
        parseConfig(
          { servers: {}, orchestrator: { maxDeadlineMs: 600_000 }, toolCalls: { keepFailedSeconds: 599 } },
          {},
        ),
      );
      expect(failed.key).toBe('toolCalls.keepFailedSeconds');
      expect(failed.message).toContain('orchestrator.maxDeadlineMs (600000 ms = 600 s)');
    });
  });
});
