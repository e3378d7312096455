import { LOG_LEVEL_META_KEY, type ServerContext } from '@modelcontextprotocol/server';
import { type LogLevel, LogLevelSchema } from '@switchyard/contracts';

/**
 * The level a 2025-11-25 client's call's logs are relayed at when the call names none and its key set
 * none with `logging/setLevel` (log-levels.ts): the revision lets a server that has no level decide what
 * to send ("the server MAY decide which messages to send automatically"). Info and above.
 */
export const LEGACY_DEFAULT_LOG_LEVEL: LogLevel = 'info';

/**
 * The least severe level of the call's log messages the client wants relayed, or undefined for none
 * (docs/semantics.md §16, Logs). 2026-07-28 names it per request (`_meta["io.modelcontextprotocol/logLevel"]`),
 * and a request without it MUST NOT get `notifications/message`. A 2025-11-25 call may name it the same
 * way; else it gets the level its API key last set with `logging/setLevel` (`stored`), else
 * LEGACY_DEFAULT_LOG_LEVEL. A level that is not one of MCP's is ignored.
 */
export function callLogLevel(ctx: ServerContext, modern: boolean, stored?: LogLevel): LogLevel | undefined {
  const envelope = (ctx.mcpReq.envelope ?? ctx.mcpReq._meta) as Record<string, unknown> | undefined;
  const named = LogLevelSchema.safeParse(
    envelope?.[LOG_LEVEL_META_KEY] ?? ctx.mcpReq._meta?.[LOG_LEVEL_META_KEY],
  );
  if (named.success) return named.data;
  return modern ? undefined : (stored ?? LEGACY_DEFAULT_LOG_LEVEL);
}
