import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, expandEnv, pathMatcher } from './env-expansion.ts';

export const SERVER_NAME = /^[a-z][a-z0-9-]{0,30}$/;
export const TEAM_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** `maxTimeoutMs` defaults to this many per-attempt timeouts. */
export const DEFAULT_MAX_TIMEOUT_FACTOR = 4;

const toolNames = z.array(z.string().min(1)).default([]);

/** Settings every transport shares: limits, retries, health and idempotency. */
const serverCommon = {
  /** Fleet-wide in-flight limit for this server (BullMQ global concurrency) and per-session limit. */
  concurrency: z.int().min(1).max(256).default(1),
  /** Per-attempt timeout of one tools/call. */
  timeoutMs: z.int().min(1).max(3_600_000).default(15_000),
  /** Progress notifications extend the per-attempt timeout, but never past this (default 4 × timeoutMs). */
  maxTimeoutMs: z
    .int()
    .min(1)
    .max(24 * 3_600_000)
    .optional(),
  /** How long a call may wait in the queue before it ends `expired` (or `unavailable`). */
  queueTimeoutMs: z
    .int()
    .min(1)
    .max(24 * 3_600_000)
    .default(60_000),
  /**
   * The circuit: once every session to this server has been reconnecting for this long, new calls end
   * `unavailable` at once instead of waiting in the queue for a server that keeps failing.
   */
  unavailableAfterMs: z
    .int()
    .min(0)
    .max(24 * 3_600_000)
    .default(30_000),
  retry: z
    .strictObject({
      attempts: z.int().min(1).max(20).default(3),
      backoffMs: z.int().min(0).max(600_000).default(200),
    })
    .default({ attempts: 3, backoffMs: 200 }),
  idempotent: toolNames,
  nonIdempotent: toolNames,
  /** A trusted server's readOnlyHint / idempotentHint annotations are believed. */
  trusted: z.boolean().default(false),
  handshakeTimeoutMs: z.int().min(1).max(600_000).default(30_000),
  health: z
    .strictObject({
      pingIntervalMs: z.int().min(100).default(15_000),
      pingTimeoutMs: z.int().min(1).default(5_000),
      failureThreshold: z.int().min(1).default(3),
    })
    .default({ pingIntervalMs: 15_000, pingTimeoutMs: 5_000, failureThreshold: 3 }),
  reconnect: z
    .strictObject({
      initialDelayMs: z.int().min(0).default(250),
      maxDelayMs: z.int().min(1).default(15_000),
    })
    .default({ initialDelayMs: 250, maxDelayMs: 15_000 }),
  /** Results larger than this (serialized) are cut, with a marker. */
  maxResultBytes: z
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
};

const stdioServer = z.strictObject({
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  ...serverCommon,
});

const remoteServer = {
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  ...serverCommon,
};
const httpServer = z.strictObject({ transport: z.literal('http'), ...remoteServer });
const sseServer = z.strictObject({ transport: z.literal('sse'), ...remoteServer });

/** A server entry without `transport` is stdio when it has a command and http when it has a url. */
function defaultTransport(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || 'transport' in raw) return raw;
  if ('url' in raw) return { ...raw, transport: 'http' };
  return { ...raw, transport: 'stdio' };
}

export const ServerConfigSchema = z
  .preprocess(defaultTransport, z.discriminatedUnion('transport', [stdioServer, httpServer, sseServer]))
  .superRefine((server, ctx) => {
    const both = server.idempotent.filter((tool) => server.nonIdempotent.includes(tool));
    if (both.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['idempotent'],
        message: `tools listed as both idempotent and nonIdempotent: ${both.join(', ')}`,
      });
    }
    if (server.maxTimeoutMs !== undefined && server.maxTimeoutMs < server.timeoutMs) {
      ctx.addIssue({ code: 'custom', path: ['maxTimeoutMs'], message: 'must be at least timeoutMs' });
    }
  })
  // Resolved here, once: code reads `maxTimeoutMs` and never restates the default.
  .transform((server) => ({
    ...server,
    maxTimeoutMs: server.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_FACTOR * server.timeoutMs,
  }));

export const TeamConfigSchema = z.strictObject({
  apiKeys: z.array(z.string().min(16, 'API keys must be at least 16 characters')).min(1),
  tools: z
    .strictObject({ allow: z.array(z.string().min(1)).default(['*']), deny: z.array(z.string()).default([]) })
    .default({ allow: ['*'], deny: [] }),
  maxConcurrentJobs: z.int().min(1).default(10),
});

export const WorkerSettingsSchema = z
  .strictObject({
    /** How often a worker republishes its session states; a worker silent for 3 beats is gone. */
    heartbeatMs: z.int().min(100).default(2_000),
    /** BullMQ lock: a worker that dies mid-call loses its jobs to the stalled check after this. */
    lockDurationMs: z.int().min(500).default(30_000),
    stalledIntervalMs: z.int().min(250).default(15_000),
    /** SIGTERM: how long in-flight calls get to finish before sessions are closed. */
    shutdownGraceMs: z.int().min(0).default(30_000),
  })
  .default({
    heartbeatMs: 2_000,
    lockDurationMs: 30_000,
    stalledIntervalMs: 15_000,
    shutdownGraceMs: 30_000,
  });

export const OrchestratorSettingsSchema = z
  .strictObject({
    /** Agent runs one orchestrator replica works on at once. */
    agentRunConcurrency: z.int().min(1).max(1000).default(20),
    /** BullMQ lock of an agent run: a replica that dies mid-run loses it to another after this. */
    lockDurationMs: z.int().min(500).default(30_000),
    stalledIntervalMs: z.int().min(250).default(15_000),
    /** Largest accepted HTTP request body. */
    maxRequestBytes: z
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /**
     * How long an API request waits for PostgreSQL or Redis before it is answered 503 with Retry-After
     * (a paused or restarting dependency must not hold requests until the client gives up).
     */
    dependencyTimeoutMs: z.int().min(50).max(60_000).default(2_000),
    /** The Retry-After (seconds) of a 503 while a dependency is down and of a 429 past a team's limit. */
    retryAfterSeconds: z.int().min(1).max(3_600).default(5),
    /** Node's server.requestTimeout: the whole request (headers and body) must arrive within this. */
    requestTimeoutMs: z.int().min(1_000).max(600_000).default(30_000),
    /** Node's server.headersTimeout: the request headers must arrive within this. */
    headersTimeoutMs: z.int().min(1_000).max(600_000).default(10_000),
    /** Open server-sent event streams (GET /v1/jobs/:id/events) one team may hold on one replica. */
    maxEventStreamsPerTeam: z.int().min(1).max(100_000).default(50),
    /** Limits of a job that does not set its own. */
    defaultLimits: z
      .strictObject({
        maxSteps: z.int().min(1).default(20),
        maxToolCalls: z.int().min(1).default(100),
        deadlineMs: z.int().min(1000).default(600_000),
      })
      .default({ maxSteps: 20, maxToolCalls: 100, deadlineMs: 600_000 }),
  })
  // Node refuses a headersTimeout above requestTimeout.
  .refine((settings) => settings.headersTimeoutMs <= settings.requestTimeoutMs, {
    path: ['headersTimeoutMs'],
    message: 'must be at most requestTimeoutMs',
  })
  .default({
    agentRunConcurrency: 20,
    lockDurationMs: 30_000,
    stalledIntervalMs: 15_000,
    maxRequestBytes: 1024 * 1024,
    dependencyTimeoutMs: 2_000,
    retryAfterSeconds: 5,
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
    maxEventStreamsPerTeam: 50,
    defaultLimits: { maxSteps: 20, maxToolCalls: 100, deadlineMs: 600_000 },
  });

/**
 * Operators see the fleet in full on /v1/servers and /v1/tools (sessions' last errors, every team's
 * tools, queue depths); a team's key shows only what its own filters allow.
 */
export const OperatorsConfigSchema = z
  .strictObject({
    apiKeys: z.array(z.string().min(16, 'API keys must be at least 16 characters')).default([]),
  })
  .default({ apiKeys: [] });

export const SwitchyardConfigSchema = z.strictObject({
  servers: z.record(
    z.string().regex(SERVER_NAME, `server names must match ${SERVER_NAME.source}`),
    ServerConfigSchema,
  ),
  teams: z
    .record(z.string().regex(TEAM_NAME, `team names must match ${TEAM_NAME.source}`), TeamConfigSchema)
    .default({}),
  worker: WorkerSettingsSchema,
  orchestrator: OrchestratorSettingsSchema,
  operators: OperatorsConfigSchema,
});

export type ServerConfig = z.output<typeof ServerConfigSchema>;
export type StdioServerConfig = Extract<ServerConfig, { transport: 'stdio' }>;
export type RemoteServerConfig = Extract<ServerConfig, { transport: 'http' | 'sse' }>;
export type TeamConfig = z.output<typeof TeamConfigSchema>;
export type WorkerSettings = z.output<typeof WorkerSettingsSchema>;
export type OrchestratorSettings = z.output<typeof OrchestratorSettingsSchema>;
export type OperatorsConfig = z.output<typeof OperatorsConfigSchema>;
export type SwitchyardConfig = z.output<typeof SwitchyardConfigSchema>;

function describeIssue(issue: z.core.$ZodIssue): ConfigError {
  const key = issue.path.map(String).join('.');
  // A bad record key (a server or team name) carries the useful message one level down.
  if (issue.code === 'invalid_key' && issue.issues[0]) return new ConfigError(key, issue.issues[0].message);
  return new ConfigError(key, issue.message);
}

export interface ConfigOptions {
  /**
   * Dotted-path globs of secrets this process never uses; a `${VAR}` missing there stays unexpanded
   * instead of failing start-up.
   */
  unusedSecrets?: string[];
}

/** What the tool worker never reads: the teams' API keys. */
export const WORKER_UNUSED_SECRETS = ['teams.**', 'operators.**'];
/** What the orchestrator never reads: the MCP servers' environment and headers (tokens). */
export const ORCHESTRATOR_UNUSED_SECRETS = ['servers.*.env.*', 'servers.*.headers.*'];

/** Validates an already-parsed document; `${VAR}` references are expanded from `env` first. */
export function parseConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  source?: string,
  options: ConfigOptions = {},
): SwitchyardConfig {
  let expanded: unknown;
  try {
    expanded = expandEnv(raw ?? {}, env, [], pathMatcher(options.unusedSecrets ?? []));
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(error.key, error.reason, source);
    throw error;
  }
  const result = SwitchyardConfigSchema.safeParse(expanded);
  if (!result.success) {
    const [first, ...others] = result.error.issues.map(describeIssue) as [ConfigError, ...ConfigError[]];
    const more = others.map((issue) => `; ${issue.key}: ${issue.reason}`).join('');
    throw new ConfigError(first.key, `${first.reason}${more}`, source);
  }
  return result.data;
}

export function loadConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  options: ConfigOptions = {},
): SwitchyardConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('', `cannot read config file: ${(error as Error).message}`, path);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError('', `invalid YAML: ${(error as Error).message}`, path);
  }
  return parseConfig(raw, env, path, options);
}

/** `SWITCHYARD_CONFIG`, default `./switchyard.yaml`. */
export function configPathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWITCHYARD_CONFIG ?? './switchyard.yaml';
}
