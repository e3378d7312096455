import { type ToolCallProgress, ToolCallProgressSchema } from '../tool-call-progress.ts';

/** A relayed progress message, or undefined for one that is not (not JSON, or not a ToolCallProgress). */
export function parseProgressMessage(text: string): ToolCallProgress | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = ToolCallProgressSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
