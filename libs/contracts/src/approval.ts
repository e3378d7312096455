import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ToolAnnotations } from './catalog.ts';

/**
 * `required`: a person approves every call first. `auto`: required when the tool is destructive by a
 * trusted server's annotation (`destructiveHint: true`) or configured `nonIdempotent`. `never`: no approval.
 */
export const ApprovalModeSchema = z.enum(['required', 'auto', 'never']);
export type ApprovalMode = z.infer<typeof ApprovalModeSchema>;

/** One mode for every tool of a server, or a default with per-tool exceptions. */
export const ApprovalSettingSchema = z.union([
  ApprovalModeSchema,
  z.strictObject({
    default: ApprovalModeSchema.default('never'),
    tools: z.record(z.string().min(1), ApprovalModeSchema).default({}),
  }),
]);
export type ApprovalSetting = z.infer<typeof ApprovalSettingSchema>;

function modeOf(setting: ApprovalSetting | undefined, tool: string): ApprovalMode | undefined {
  if (setting === undefined) return undefined;
  if (typeof setting === 'string') return setting;
  return setting.tools[tool] ?? setting.default;
}

/**
 * Whether a call to `tool` needs a person's approval before it is dispatched. The team's setting for
 * the server wins over the server's own (docs/configuration.md).
 */
export function needsApproval(
  server: { approval: ApprovalSetting; trusted: boolean; nonIdempotent: string[] },
  teamSetting: ApprovalSetting | undefined,
  tool: string,
  annotations: ToolAnnotations | undefined,
): boolean {
  const mode = modeOf(teamSetting, tool) ?? modeOf(server.approval, tool) ?? 'never';
  if (mode !== 'auto') return mode === 'required';
  return server.nonIdempotent.includes(tool) || (server.trusted && annotations?.destructiveHint === true);
}

/** JSON with object keys sorted at every level: one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What an approval is bound to: `sha256:<hex>` of the call's canonical JSON arguments. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return `sha256:${createHash('sha256').update(canonicalJson(args)).digest('hex')}`;
}
