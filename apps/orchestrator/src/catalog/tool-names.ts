import { createHash } from 'node:crypto';

const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The model-facing name of a tool: `<server>__<tool>`, sanitised to [A-Za-z0-9_-]{1,64}, which every
 * provider accepts. Names that had to change or be shortened get a short hash of the original, so two
 * different tools do not become one name by accident; the catalog still checks for collisions.
 */
export function modelToolName(server: string, tool: string): string {
  const raw = `${server}__${tool}`;
  if (MODEL_NAME.test(raw)) return raw;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  const cleaned = raw.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${cleaned.slice(0, 64 - hash.length - 1)}_${hash}`;
}
