import { type RelayedCallMessage, RelayedCallMessageSchema } from '../tool-call-progress.ts';

/** A relayed message (progress or log), or undefined for one that is not (not JSON, or not valid). */
export function parseProgressMessage(text: string): RelayedCallMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = RelayedCallMessageSchema.safeParse(json);
  return parsed.success ? (parsed.data as RelayedCallMessage) : undefined;
}
