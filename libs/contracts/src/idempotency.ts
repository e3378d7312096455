import type { ToolAnnotations } from './catalog.ts';
import type { ServerConfig } from './config.ts';

/**
 * docs/semantics.md: idempotent when the config says so, or when a trusted server annotates the tool
 * read-only or idempotent. Everything else gets the MCP default: non-idempotent, at most once.
 */
export function isIdempotent(
  server: Pick<ServerConfig, 'idempotent' | 'nonIdempotent' | 'trusted'>,
  tool: string,
  annotations: ToolAnnotations | undefined,
): boolean {
  if (server.nonIdempotent.includes(tool)) return false;
  if (server.idempotent.includes(tool)) return true;
  if (!server.trusted) return false;
  return annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
}
