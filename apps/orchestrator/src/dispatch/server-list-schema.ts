import { SESSION_STATES } from '@switchyard/contracts';
import { z } from 'zod';

const SessionSchema = z
  .looseObject({
    workerId: z.string(),
    state: z.enum(SESSION_STATES),
    since: z.iso.datetime(),
    connects: z.int(),
    lastError: z.string().optional(),
  })
  .meta({ id: 'Session' });

/** What `GET /v1/servers` returns: a team sees counts, an operator sessions and queue depths. */
export const ServerListSchema = z
  .object({
    servers: z.array(
      z
        .looseObject({
          name: z.string(),
          transport: z.string(),
          concurrency: z.int(),
          availability: z.enum(['ready', 'recovering', 'down', 'none']),
          serverInfo: z.looseObject({ name: z.string(), version: z.string() }).optional(),
          tools: z.int().meta({ description: 'How many of its tools the viewer may see' }),
          sessions: z.union([
            z.record(z.string(), z.int()).meta({ description: 'A team: session counts by state' }),
            z.array(SessionSchema).meta({ description: 'An operator: every session' }),
          ]),
          queue: z
            .record(z.string(), z.int())
            .optional()
            .meta({ description: 'Operators only: jobs by state' }),
          protocolVersions: z
            .array(z.string())
            .optional()
            .meta({ description: 'MCP revisions its sessions negotiated (2026-07-28, 2025-11-25)' }),
          timeouts: z
            .unknown()
            .optional()
            .meta({ description: "Per-attempt timeouts: mode, the server's and each tool's current value" }),
        })
        .meta({ id: 'Server' }),
    ),
  })
  .meta({ id: 'ServerList' });
export type ServerList = z.output<typeof ServerListSchema>;
