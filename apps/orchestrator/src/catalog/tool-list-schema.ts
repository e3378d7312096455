import { z } from 'zod';

/** What `GET /v1/tools` returns (typed by it, described by the OpenAPI document). */
export const ToolListSchema = z
  .object({
    tools: z.array(
      z
        .looseObject({
          name: z
            .string()
            .meta({ description: 'The model-facing name, <server>__<tool>', example: 'search__search' }),
          server: z.string(),
          tool: z.string(),
          description: z.string(),
          available: z.boolean(),
          availability: z.enum(['ready', 'recovering', 'down', 'none']),
          idempotent: z.boolean(),
          inputSchema: z.record(z.string(), z.unknown()),
          annotations: z.record(z.string(), z.unknown()).optional(),
          execution: z
            .record(z.string(), z.unknown())
            .optional()
            .meta({ description: "The tool's MCP execution hints" }),
          requiresTask: z.boolean().meta({ description: 'Its server runs it only as a task' }),
        })
        .meta({ id: 'Tool' }),
    ),
    errors: z.array(z.string()).meta({ description: 'Tools left out, e.g. name collisions' }),
  })
  .meta({ id: 'ToolList' });
export type ToolList = z.output<typeof ToolListSchema>;
