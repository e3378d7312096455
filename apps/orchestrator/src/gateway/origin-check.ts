import ipaddr from 'ipaddr.js';

/**
 * The Streamable HTTP transport's Origin rule (MCP 2025-11-25, transports, "Security Warning"): a server
 * MUST validate the `Origin` of every request and answer 403 when one is present and invalid, so that a
 * page a browser loaded from elsewhere — a DNS-rebound host name above all — cannot talk to `/mcp`.
 *
 * Valid: no `Origin` at all (MCP clients that are not browsers send none); an origin listed in
 * `orchestrator.mcp.allowedOrigins`; a loopback origin (`localhost`, `127.0.0.0/8`, `[::1]`) on a
 * request whose `Host` is loopback too — a browser-based client on the same machine as a local
 * orchestrator. A rebound page carries its own host name in both `Host` and `Origin`, so comparing the two
 * would prove nothing: a non-loopback origin must be listed.
 *
 * Returns the reason for the 403, or undefined when the request may go on.
 */
export function originRefusal(
  headers: Record<string, string | string[] | undefined>,
  allowedOrigins: readonly string[],
): string | undefined {
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  const given = Array.isArray(origin) ? origin.join(', ') : origin;
  const parsed = parseOrigin(given);
  if (parsed && allowedOrigins.includes(parsed.origin)) return undefined;
  if (parsed && isLoopbackName(parsed.hostname) && isLoopbackHost(headers.host)) return undefined;
  return `Origin "${given}" may not use /mcp: list it in orchestrator.mcp.allowedOrigins`;
}

function parseOrigin(text: string): URL | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

function isLoopbackHost(host: string | string[] | undefined): boolean {
  if (typeof host !== 'string' || !URL.canParse(`http://${host}`)) return false;
  return isLoopbackName(new URL(`http://${host}`).hostname);
}

/** `localhost`, `*.localhost` (RFC 6761 keeps them on this machine), and loopback addresses. */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(name)) return false;
  const address = ipaddr.process(name);
  return address.range() === 'loopback';
}
