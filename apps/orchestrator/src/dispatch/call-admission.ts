import {
  type ArgumentValidator,
  isIdempotent,
  type ServerConfig,
  type SwitchyardConfig,
  type ToolCallJob,
  ToolCallJobSchema,
  type ToolCallOutcome,
} from '@switchyard/contracts';
import type { CatalogReader } from '../catalog/catalog-reader.ts';
import { localOutcome } from './local-outcome.ts';
import type { ToolCallRequest } from './tool-call-request.ts';

/** A call the fleet may take (its queue job's data), or the outcome that says why it was not sent. */
export type Admission = { admitted: ToolCallJob; server: ServerConfig } | { refused: ToolCallOutcome };

/** The default wait for a worker when neither the call nor its server sets queueTimeoutMs. */
const DEFAULT_QUEUE_TIMEOUT_MS = 60_000;

/** How long a call may wait for a worker: its own queueTimeoutMs, else its server's, else the default. */
export function queueTimeoutMs(
  request: Pick<ToolCallRequest, 'queueTimeoutMs'>,
  server?: ServerConfig,
): number {
  return request.queueTimeoutMs ?? server?.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;
}

/**
 * Decides, before anything is queued, whether a call may go to its server's queue: the server exists,
 * a worker serves it, its circuit is closed, and the arguments match the tool's published schema. The
 * admitted job carries its queue deadline and whether it may be retried (unknown annotations — the
 * catalog not yet published — mean non-idempotent: the MCP default).
 */
export async function admitCall(
  request: ToolCallRequest,
  deps: { config: SwitchyardConfig; catalog: CatalogReader; validator: ArgumentValidator; now: number },
): Promise<Admission> {
  const { config, catalog, validator, now } = deps;
  const server = config.servers[request.server];
  const data: ToolCallJob = ToolCallJobSchema.parse({
    jobId: request.jobId,
    toolCallId: request.toolCallId,
    server: request.server,
    tool: request.tool,
    arguments: request.arguments,
    deadline: now + queueTimeoutMs(request, server),
    enqueuedAt: now,
    idempotent: false,
    trace: request.trace ?? {},
    ...(request.team ? { team: request.team } : {}),
    labels: request.labels ?? {},
    ...(request.answer ? { answer: request.answer } : {}),
    ...(request.logLevel ? { logLevel: request.logLevel } : {}),
  });
  if (!server) {
    return {
      refused: localOutcome(
        data,
        'failed',
        `No MCP server named "${request.server}" is configured.`,
        'unknown_server',
      ),
    };
  }
  const availability = await catalog.availability(request.server, server.unavailableAfterMs);
  if (availability === 'none') {
    return {
      refused: localOutcome(
        data,
        'unavailable',
        `No worker serves ${request.server} right now; the call was not sent.`,
      ),
    };
  }
  if (availability === 'down') {
    const reason = (await catalog.lastError(request.server)) ?? 'its sessions keep failing';
    return {
      refused: localOutcome(
        data,
        'unavailable',
        `${request.server} has been failing for over ${server.unavailableAfterMs} ms, so the call was not sent: ${reason}`,
        'circuit_open',
      ),
    };
  }
  const tool = await catalog.tool(request.server, request.tool);
  if (tool) {
    const check = validator.check(tool.inputSchema, request.arguments);
    if (!check.ok) {
      const errors = check.errors.join('; ');
      return {
        refused: localOutcome(
          data,
          'invalid_arguments',
          `Invalid arguments for ${request.server}__${request.tool}: ${errors}`,
          errors,
        ),
      };
    }
  }
  data.idempotent = isIdempotent(server, request.tool, tool?.annotations);
  return { admitted: data, server };
}
