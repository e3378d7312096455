import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ApprovalSettingSchema } from './approval.ts';
import { ConfigError, expandEnv, pathMatcher } from './env-expansion.ts';
import { ServerAuthSchema, StdioAuthSchema } from './server-auth.ts';
import { TeamModelsSchema } from './team-models.ts';
import { retentionIssues, ToolCallRetentionSchema } from './tool-call-retention.ts';
import {
  DEFAULT_WEBHOOK_EVENTS,
  WebhookEventsSchema,
  WebhookSecretSchema,
  WebhookUrlSchema,
} from './webhooks.ts';

export const SERVER_NAME = /^[a-z][a-z0-9-]{0,30}$/;
export const TEAM_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** `maxTimeoutMs` defaults to this many per-attempt timeouts. */
export const DEFAULT_MAX_TIMEOUT_FACTOR = 4;

const toolNames = z.array(z.string().min(1)).default([]);

/** How `timeouts: adaptive` learns; ignored with `timeouts: static`. */
const AdaptiveTimeoutsSchema = z
  .strictObject({
    /** The per-attempt timeout is this many times the P95 of recent successful calls. */
    factor: z.number().min(1).max(100).default(1.5),
    /** Never less than this, however fast the server has been. */
    minMs: z.int().min(1).max(3_600_000).default(250),
    /** Never more than this (default: `maxTimeoutMs`, the hard cap progress may extend a call to). */
    maxMs: z
      .int()
      .min(1)
      .max(24 * 3_600_000)
      .optional(),
    /** Samples a tool (or the server) needs before its P95 is used instead of `timeoutMs`. */
    minSamples: z.int().min(1).max(10_000).default(20),
    /** The window: at most this many recent samples per tool and per server… */
    windowSamples: z.int().min(1).max(10_000).default(200),
    /** …and none older than this, so a server that went quiet re-learns from `timeoutMs`. */
    windowMs: z
      .int()
      .min(1_000)
      .max(7 * 24 * 3_600_000)
      .default(900_000),
  })
  .default({ factor: 1.5, minMs: 250, minSamples: 20, windowSamples: 200, windowMs: 900_000 });

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
  /**
   * Order of waiting calls: `teams` interleaves the teams' calls by their weight (a team's next call
   * queues behind as many of each other team's calls as it has waiting itself), `fifo` is arrival order.
   */
  fairness: z.enum(['teams', 'fifo']).default('teams'),
  /** Whether a person approves calls first (docs/semantics.md §15): required | auto | never, or per tool. */
  approval: ApprovalSettingSchema.default('never'),
  handshakeTimeoutMs: z.int().min(1).max(600_000).default(30_000),
  /**
   * The MCP revision: `auto` probes with `server/discover` and speaks 2026-07-28 when the server does,
   * else the `initialize` handshake; `2026-07-28` insists on it (no fallback); `2025-11-25` skips the
   * probe (saves one request, and on stdio one extra process spawn, per connect) and uses initialize.
   */
  protocol: z.enum(['auto', '2026-07-28', '2025-11-25']).default('auto'),
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
  /**
   * `static`: every attempt gets `timeoutMs`. `adaptive`: each attempt gets clamp(factor × P95, minMs,
   * maxMs) of the fleet's recent successful call durations (the tool's own once it has enough samples,
   * else the server's), and `timeoutMs` until enough samples exist (docs/semantics.md §6).
   */
  timeouts: z.enum(['static', 'adaptive']).default('static'),
  adaptiveTimeouts: AdaptiveTimeoutsSchema,
  /** Results larger than this (serialized) are cut, with a marker. */
  maxResultBytes: z
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
  /** The server's questions (elicitation, docs/semantics.md §14). */
  elicitation: z
    .strictObject({
      /**
       * Answer a form question at once with its requested schema's defaults when every field has one
       * (SEP-1034), instead of parking the call for a person. Off: such a question waits for a person.
       */
      answerWithDefaults: z.boolean().default(false),
    })
    .default({ answerWithDefaults: false }),
  /**
   * MCP tasks (durable calls, docs/semantics.md §12). `mode`: `auto` runs a tool as a task when it
   * declares `execution.taskSupport: required`; `prefer` also when it declares `optional`; `never` sends
   * no task (a task-required tool is then refused before sending, executed `no`). A task may run up to
   * `maxDurationMs`; then it is cancelled (`tasks/cancel`) and ends `timeout`.
   */
  tasks: z
    .strictObject({
      mode: z.enum(['auto', 'prefer', 'never']).default('auto'),
      maxDurationMs: z
        .int()
        .min(1)
        .max(7 * 24 * 3_600_000)
        .default(3_600_000),
    })
    .default({ mode: 'auto', maxDurationMs: 3_600_000 }),
};

const stdioServer = z.strictObject({
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  /** Per-team secrets (server-auth.ts): a team's calls run in its own child process. */
  auth: StdioAuthSchema.optional(),
  ...serverCommon,
});

const remoteServer = {
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  /** Per-team credentials (server-auth.ts): each tools/call reaches the server as its own team. */
  auth: ServerAuthSchema.optional(),
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
    if (server.transport === 'sse' && server.protocol === '2026-07-28') {
      ctx.addIssue({
        code: 'custom',
        path: ['protocol'],
        message: 'the legacy SSE transport cannot carry 2026-07-28; use transport http',
      });
    }
    if (server.maxTimeoutMs !== undefined && server.maxTimeoutMs < server.timeoutMs) {
      ctx.addIssue({ code: 'custom', path: ['maxTimeoutMs'], message: 'must be at least timeoutMs' });
    }
    checkAdaptiveTimeouts(server, ctx);
  })
  // Resolved here, once: code reads `maxTimeoutMs` and never restates the default.
  .transform((server) => {
    const maxTimeoutMs = server.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_FACTOR * server.timeoutMs;
    return {
      ...server,
      maxTimeoutMs,
      adaptiveTimeouts: { ...server.adaptiveTimeouts, maxMs: server.adaptiveTimeouts.maxMs ?? maxTimeoutMs },
    };
  });

function checkAdaptiveTimeouts(
  server: {
    timeouts: 'static' | 'adaptive';
    timeoutMs: number;
    maxTimeoutMs?: number | undefined;
    adaptiveTimeouts: z.output<typeof AdaptiveTimeoutsSchema>;
  },
  ctx: z.RefinementCtx,
): void {
  // A static server's adaptive settings are never used, so defaults that do not fit it are no error.
  if (server.timeouts !== 'adaptive') return;
  const { minMs, maxMs, minSamples, windowSamples } = server.adaptiveTimeouts;
  const cap = server.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_FACTOR * server.timeoutMs;
  const issue = (key: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: ['adaptiveTimeouts', key], message });
  if (maxMs !== undefined && maxMs < minMs) issue('maxMs', 'must be at least adaptiveTimeouts.minMs');
  // Progress cannot extend an attempt past maxTimeoutMs, so a larger per-attempt value would never fire.
  if (maxMs !== undefined && maxMs > cap) issue('maxMs', `must be at most maxTimeoutMs (${cap})`);
  if (maxMs === undefined && minMs > cap) issue('minMs', `must be at most maxTimeoutMs (${cap})`);
  if (minSamples > windowSamples) issue('minSamples', 'must be at most adaptiveTimeouts.windowSamples');
}

/** A team-wide webhook: every job of the team is reported to it. */
export const TeamWebhookSchema = z.strictObject({
  url: WebhookUrlSchema,
  events: WebhookEventsSchema.default(DEFAULT_WEBHOOK_EVENTS),
  /** Its own signing secret; without one, the team's webhookSecret signs. */
  secret: WebhookSecretSchema.optional(),
});

export const TeamConfigSchema = z.strictObject({
  apiKeys: z.array(z.string().min(16, 'API keys must be at least 16 characters')).min(1),
  tools: z
    .strictObject({ allow: z.array(z.string().min(1)).default(['*']), deny: z.array(z.string()).default([]) })
    .default({ allow: ['*'], deny: [] }),
  maxConcurrentJobs: z.int().min(1).default(10),
  /** Share of a busy server's turns against other teams' calls (fairness: teams): 2 = twice team weight 1. */
  weight: z.int().min(1).max(100).default(1),
  /**
   * Tool calls this team's jobs may send to the fleet per minute, all replicas together; a call past
   * it is queued with a delay until its turn (never refused). Unset: no limit.
   */
  callsPerMinute: z.int().min(1).max(1_000_000).optional(),
  /** Signs per-job webhooks (and team webhooks without their own secret); a job asking for one needs it. */
  webhookSecret: WebhookSecretSchema.optional(),
  webhooks: z.array(TeamWebhookSchema).max(20).default([]),
  /** Per server: overrides `servers.<name>.approval` for this team's calls. */
  approval: z.record(z.string(), ApprovalSettingSchema).default({}),
  /** When set, only these keys decide this team's approvals (the team's apiKeys then cannot). */
  approverKeys: z.array(z.string().min(16, 'API keys must be at least 16 characters')).default([]),
  /**
   * The team's own model credentials (team-models.ts). Without it the team's agent jobs use the
   * deployment's keys and default model, from the orchestrator's environment.
   */
  models: TeamModelsSchema.optional(),
});

/** A team webhook without its own secret is signed with the team's webhookSecret, which must then exist. */
const TeamWithSecretsSchema = TeamConfigSchema.superRefine((team, ctx) => {
  team.webhooks.forEach((hook, index) => {
    if (!hook.secret && !team.webhookSecret) {
      ctx.addIssue({
        code: 'custom',
        path: ['webhooks', index, 'secret'],
        message: 'required when the team has no webhookSecret',
      });
    }
  });
});

/**
 * `WAIT <replicas> <timeoutMs>` after the fenced marker of a non-idempotent call: `auto` waits for every
 * replica the primary (of the queue's slot, on a cluster) reports connected, re-read every heartbeat, and
 * waits for none when it has none; a number waits for exactly that many (0: never wait). The wait used
 * is at most a quarter of lockDurationMs: WAIT holds up the worker's shared connection (its lock renewals
 * too) while replicas are behind.
 */
export const ReplicaWaitSchema = z
  .strictObject({
    replicas: z.union([z.literal('auto'), z.int().min(0).max(100)]).default('auto'),
    timeoutMs: z.int().min(10).max(60_000).default(1_000),
  })
  .default({ replicas: 'auto', timeoutMs: 1_000 });

export type ReplicaWaitSettings = z.output<typeof ReplicaWaitSchema>;

export const WorkerSettingsSchema = z
  .strictObject({
    /** How often a worker republishes its session states; a worker silent for 3 beats is gone. */
    heartbeatMs: z.int().min(100).default(2_000),
    /** BullMQ lock: a worker that dies mid-call loses its jobs to the stalled check after this. */
    lockDurationMs: z.int().min(500).default(30_000),
    stalledIntervalMs: z.int().min(250).default(15_000),
    /** SIGTERM: how long in-flight calls get to finish before sessions are closed. */
    shutdownGraceMs: z.int().min(0).default(30_000),
    /** Replicas that must have a non-idempotent call's marker before it is sent (docs/semantics.md §3). */
    replicaWait: ReplicaWaitSchema,
  })
  .default({
    heartbeatMs: 2_000,
    lockDurationMs: 30_000,
    stalledIntervalMs: 15_000,
    shutdownGraceMs: 30_000,
    replicaWait: { replicas: 'auto', timeoutMs: 1_000 },
  });

export const OrchestratorSettingsSchema = z
  .strictObject({
    /**
     * Agent runs one orchestrator replica works on at once. A run mostly waits on its model, so this is
     * the replica's runs in flight, not its CPU: ≈ 200 keep one replica's event loop busy when model steps
     * take ≈ 2 s (docs/capacity.md, "Many waiting runs on one replica"). The default stays 20 because on
     * the PostgreSQL backend the replica's queue pool grows with it (10 + this / 4 connections) and a
     * few replicas at 200 pass PostgreSQL's default max_connections of 100.
     */
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
    /** Ended jobs (row, tool calls, events, checkpoints) are deleted this many days after they ended. */
    jobRetentionDays: z.int().min(1).max(36_500).default(30),
    /** How often some replica deletes the jobs past jobRetentionDays (a BullMQ job scheduler). */
    retentionSweepMs: z.int().min(1_000).max(86_400_000).default(3_600_000),
    /**
     * How often every replica compares Redis with PostgreSQL (the record): a Redis that lost its data
     * is noticed by its epoch keys, and an open job whose `{agent-runs}` entry is gone is queued again.
     */
    reconcileEveryMs: z.int().min(250).max(600_000).default(5_000),
    /** Delivery of webhooks (docs/operations.md): retried with exponential backoff through a BullMQ queue. */
    webhooks: z
      .strictObject({
        /** Tries per delivery, the first included. */
        attempts: z.int().min(1).max(30).default(8),
        /** The first retry waits this long, each further one twice as long as the one before. */
        backoffMs: z.int().min(10).max(3_600_000).default(5_000),
        /** One attempt (connect, send, answer) may take this long. */
        timeoutMs: z.int().min(100).max(120_000).default(10_000),
        /** Deliveries one replica sends at once. */
        concurrency: z.int().min(1).max(1_000).default(10),
        /**
         * Internal networks (CIDRs, e.g. `10.1.0.0/16`, `127.0.0.1/32`) webhooks may reach; every other
         * loopback, private, link-local, unique-local, CGNAT, multicast, reserved… address is refused
         * (docs/operations.md, Webhooks). Cloud metadata addresses are refused even inside these.
         */
        allowPrivateNetworks: z
          .array(z.union([z.cidrv4(), z.cidrv6()], { error: 'not a CIDR (e.g. 10.1.0.0/16 or fd00:1::/48)' }))
          .max(100)
          .default([]),
      })
      .default({
        attempts: 8,
        backoffMs: 5_000,
        timeoutMs: 10_000,
        concurrency: 10,
        allowPrivateNetworks: [],
      }),
    /**
     * Who may read /metrics (docs/operations.md): its labels name teams and servers. Without either
     * key it is open on the API port, like /health; keep it inside the cluster then.
     */
    metrics: z
      .strictObject({
        /** Scrapes must send `Authorization: Bearer <token>`; others get a 401. A secret: use `${VAR}`. */
        bearerToken: z.string().min(16, 'must be at least 16 characters').optional(),
        /** Serve /metrics on this port (same HOST) instead of the API port, which then answers 404. */
        port: z.int().min(1).max(65_535).optional(),
      })
      .default({}),
    /** The `/mcp` gateway (docs/architecture.md, gateway). */
    mcp: z
      .strictObject({
        /**
         * Browser origins (`https://host[:port]`, no path) whose pages may call /mcp. A request with any
         * other `Origin` is refused 403 (the transport's DNS-rebinding rule); requests without one, and a
         * loopback origin on a loopback host, need no entry (docs/semantics.md, the /mcp gateway).
         */
        allowedOrigins: z
          .array(
            z.string().refine((text) => URL.canParse(text) && new URL(text).origin === text, {
              error: 'not an origin: scheme://host[:port] with no path or trailing slash',
            }),
          )
          .max(100)
          .default([]),
      })
      .default({ allowedOrigins: [] }),
    /** How long an approval request waits for a decision (never past the job's deadline). */
    approvalTtlMs: z
      .int()
      .min(1_000)
      .max(7 * 24 * 3_600_000)
      .default(3_600_000),
    /**
     * The longest deadline (`limits.deadlineMs`) a job may ask for; every run ends by it. Finished tool
     * calls must stay in Redis at least this long (`toolCalls.keepCompletedSeconds`, docs/semantics.md §2).
     */
    maxDeadlineMs: z
      .int()
      .min(1000)
      .max(24 * 3_600_000)
      .default(24 * 3_600_000),
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
  .refine((settings) => settings.defaultLimits.deadlineMs <= settings.maxDeadlineMs, {
    path: ['defaultLimits', 'deadlineMs'],
    message: 'must be at most orchestrator.maxDeadlineMs',
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
    jobRetentionDays: 30,
    retentionSweepMs: 3_600_000,
    reconcileEveryMs: 5_000,
    webhooks: { attempts: 8, backoffMs: 5_000, timeoutMs: 10_000, concurrency: 10, allowPrivateNetworks: [] },
    metrics: {},
    mcp: { allowedOrigins: [] },
    approvalTtlMs: 3_600_000,
    maxDeadlineMs: 24 * 3_600_000,
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

export const SwitchyardConfigSchema = z
  .strictObject({
    servers: z.record(
      z.string().regex(SERVER_NAME, `server names must match ${SERVER_NAME.source}`),
      ServerConfigSchema,
    ),
    teams: z
      .record(z.string().regex(TEAM_NAME, `team names must match ${TEAM_NAME.source}`), TeamWithSecretsSchema)
      .default({}),
    worker: WorkerSettingsSchema,
    orchestrator: OrchestratorSettingsSchema,
    operators: OperatorsConfigSchema,
    /** Shared by the dispatcher and the worker: both add and finish tool-call jobs. */
    toolCalls: ToolCallRetentionSchema,
    /**
     * Where the queues live (store/backend-choice.ts): `redis` or `postgres`. SWITCHYARD_BACKEND wins; unset
     * in both, chosen from the environment.
     */
    backend: z.enum(['redis', 'postgres']).optional(),
  })
  .superRefine((config, ctx) => {
    for (const issue of retentionIssues(config.toolCalls, config.orchestrator.maxDeadlineMs)) {
      ctx.addIssue({ code: 'custom', ...issue });
    }
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

/** What the tool worker never reads: the teams' API keys and the orchestrator's /metrics token. */
export const WORKER_UNUSED_SECRETS = ['teams.**', 'operators.**', 'orchestrator.metrics.bearerToken'];
/** What the orchestrator never reads: the MCP servers' environment and headers (tokens). */
export const ORCHESTRATOR_UNUSED_SECRETS = ['servers.*.env.*', 'servers.*.headers.*', 'servers.*.auth.**'];

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
