import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Redis layout. One prefix per deployment; every key of one queue carries the same `{hash tag}`
 * so BullMQ's multi-key scripts work on Redis Cluster, while different servers spread over slots.
 */
export const PrefixSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_.-]{1,64}$/,
    'the prefix may hold letters, digits, "_", "." and "-" (no ":" or braces)',
  );

export const DEFAULT_PREFIX = 'switchyard';

export function prefixFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return PrefixSchema.parse(env.SWITCHYARD_PREFIX ?? DEFAULT_PREFIX);
}

/** BullMQ queue name of one MCP server: `tools.{docs}`. */
export function toolQueueName(server: string): string {
  return `tools.{${server}}`;
}

export const AGENT_RUNS_QUEUE = '{agent-runs}';

export const redisKeys = {
  /** Hash: server → ServerCatalogEntry JSON. */
  catalog: (prefix: string) => `${prefix}:catalog`,
  /** Hash: worker id → WorkerHeartbeat JSON; entries past `expiresAt` are dead workers. */
  workers: (prefix: string) => `${prefix}:workers`,
  /** Stream of settled tool calls, read by every orchestrator with one blocking connection. */
  outcomes: (prefix: string) => `${prefix}:outcomes`,
  /** Pub/sub channel: a worker's sessions changed state (so waiters can re-check availability). */
  catalogChanged: (prefix: string) => `${prefix}:catalog-changed`,
  /**
   * Pub/sub channel: cancel a running tool call. Message: ToolCallCancel JSON. Every worker listens on
   * one subscriber connection; the one holding the job aborts its MCP request.
   */
  cancels: (prefix: string) => `${prefix}:tool-call-cancels`,
  /** Pub/sub channel: MCP progress of a running tool call that asked for it. Message: ToolCallProgress JSON. */
  progress: (prefix: string) => `${prefix}:tool-call-progress`,
  /**
   * Sorted set: a team's calls not yet settled on one server's queue (member: job id, score: its start
   * deadline). Carries the queue's hash tag, so it lives in the queue's slot.
   */
  teamLine: (prefix: string, server: string, team: string) =>
    `${prefix}:${toolQueueName(server)}:team-line:${team}`,
  /**
   * List, newest first: recent successful call durations of one server (all its tools) or, with `tool`,
   * of one tool (entries `ms@finishedAt`, see adaptive-timeout.ts). Tagged `{server}` like the server's
   * queue, so both live in one cluster slot.
   */
  latency: (prefix: string, server: string, tool?: string) =>
    tool === undefined ? `${prefix}:latency:{${server}}` : `${prefix}:latency:{${server}}:tool:${tool}`,
  /**
   * String: one team's cached OAuth token for one server, shared by the fleet. Keyed by identity (team,
   * issuer, server), never by server alone, so one team can never be handed another's token. A
   * DPoP-bound token also by the thumbprint of the key it is bound to (`:dpop:<jkt>`): only the worker
   * holding that key can use it (a server name has no `:`, so the two forms never meet).
   */
  oauthToken: (prefix: string, team: string, issuer: string, server: string, dpopKey?: string) =>
    `${prefix}:oauth-token:${team}:${encodeURIComponent(issuer)}:${server}${dpopKey ? `:dpop:${dpopKey}` : ''}`,
  /**
   * String: a random id (SET NX when absent) vouching that Redis still holds what was written to one
   * hash slot since it was set: missing or changed means the data was lost (a restart without
   * persistence, FLUSHALL, a failover to a replica that never had it). One per slot that matters —
   * `tag` is a queue's hash tag: a server's name for `tools.{<server>}`, `agent-runs` for the runs —
   * because on Redis Cluster a failover loses one shard's data, not the others'. On a single Redis
   * the keys share one fate. `<prefix>:epoch:{<tag>}` (docs/semantics.md §18).
   */
  epoch: (prefix: string, tag: string) => `${prefix}:epoch:{${tag}}`,
};

/**
 * Deterministic BullMQ job id of a tool call: a re-run of the same agent step finds the existing job
 * (or its outcome) instead of executing the call again. Hashed because BullMQ ids may not contain ":".
 */
export function toolCallJobId(jobId: string, toolCallId: string): string {
  const digest = createHash('sha256').update(jobId).update('\0').update(toolCallId).digest('hex');
  return `tc-${digest.slice(0, 40)}`;
}
