import { LOG_LEVEL_META_KEY, type ServerContext } from '@modelcontextprotocol/server';
import { type LogLevel, LogLevelSchema } from '@switchyard/contracts';

/**
 * The level a 2025-11-25 client's call's logs are relayed at when the call names none. Its
 * `logging/setLevel` cannot be kept: /mcp is stateless (no session to keep it in, any replica answers
 * the next request), and the revision lets a server that has no level decide what to send (MCP
 * logging: "the server MAY decide which messages to send automatically"). Info and above, the level a
 * client that asks for nothing usually wants.
 */
export const LEGACY_DEFAULT_LOG_LEVEL: LogLevel = 'info';

/**
 * The least severe level of the call's log messages the client wants relayed, or undefined for none
 * (docs/semantics.md §16). 2026-07-28 names it per request (`_meta["io.modelcontextprotocol/logLevel"]`),
 * and a request without it MUST NOT get `notifications/message`; a 2025-11-25 call may name it the same
 * way, else it gets LEGACY_DEFAULT_LOG_LEVEL. A level that is not one of MCP's is ignored.
 */
export function callLogLevel(ctx: ServerContext, modern: boolean): LogLevel | undefined {
  const envelope = (ctx.mcpReq.envelope ?? ctx.mcpReq._meta) as Record<string, unknown> | undefined;
  const named = LogLevelSchema.safeParse(
    envelope?.[LOG_LEVEL_META_KEY] ?? ctx.mcpReq._meta?.[LOG_LEVEL_META_KEY],
  );
  if (named.success) return named.data;
  return modern ? undefined : LEGACY_DEFAULT_LOG_LEVEL;
}
