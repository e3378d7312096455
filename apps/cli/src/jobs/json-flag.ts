import { UsageError } from '../usage-error.ts';

/** A flag whose value must be a JSON object (`--args`, `--content`), refused by name otherwise. */
export function jsonObject(what: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what}: not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${what}: must be a JSON object, e.g. '{"query":"tracing"}'`);
  return value as Record<string, unknown>;
}
