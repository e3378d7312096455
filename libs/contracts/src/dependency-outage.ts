/** A dependency (PostgreSQL or Redis) did not answer in time (the orchestrator answers 503). */
export class DependencyTimeoutError extends Error {
  constructor(
    readonly dependency: string,
    readonly timeoutMs: number,
  ) {
    super(`${dependency} did not answer within ${timeoutMs} ms`);
    this.name = 'DependencyTimeoutError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/**
 * PostgreSQL SQLSTATEs of a server going away or not there yet: class 08 (connection exception),
 * 57P01..57P03 (admin/crash shutdown, cannot connect now), 53300 (too many connections).
 */
const POSTGRES_OUTAGE = /^(08...|57P0[123]|53300)$/;
const OUTAGE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection is closed',
  "Stream isn't writeable",
  'the database system is',
];

function isOutageItself(error: Error & { code?: unknown }): boolean {
  if (error instanceof DependencyTimeoutError) return true;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  const code = typeof error.code === 'string' ? error.code : '';
  if (NETWORK_CODES.has(code) || POSTGRES_OUTAGE.test(code)) return true;
  return OUTAGE_MESSAGES.some((text) => error.message.includes(text));
}

/**
 * Whether `error` (or what caused it) says PostgreSQL or Redis is unreachable, rather than that the
 * request or the query was wrong: such failures are answered 503 and retried, never reported as bugs.
 */
export function isDependencyOutage(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  if (isOutageItself(error)) return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isDependencyOutage(inner, depth + 1)))
    return true;
  return isDependencyOutage(error.cause, depth + 1);
}
