/**
 * The Streamable HTTP `Mcp-Method` / `Mcp-Name` headers say what a POST carries, so proxies and this
 * gateway can route and limit without reading the body. A header that disagrees with the body is a
 * client bug (or an attempt to slip a call past a limit keyed on the header): refused with a reason.
 */
export function headerMismatch(
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): string | undefined {
  const method = single(headers['mcp-method']);
  const name = single(headers['mcp-name']);
  if (method === undefined && name === undefined) return undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return 'Mcp-Method/Mcp-Name headers need a single JSON-RPC message in the body';
  }
  const message = body as {
    method?: unknown;
    params?: { name?: unknown; uri?: unknown; taskId?: unknown };
  };
  if (method !== undefined && method !== message.method) {
    return `Mcp-Method header "${method}" does not match the body's method "${String(message.method)}"`;
  }
  if (name !== undefined) {
    // The tasks extension's requests name their task (SEP-2663: Mcp-Name mirrors params.taskId).
    const field = TASK_METHODS.has(String(message.method)) ? 'taskId' : message.params?.uri ? 'uri' : 'name';
    const bodyName = message.params?.[field];
    if (name !== bodyName) {
      return `Mcp-Name header "${name}" does not match the body's params.${field} "${String(bodyName)}"`;
    }
  }
  return undefined;
}

const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
