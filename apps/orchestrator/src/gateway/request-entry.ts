/** Marks a request id that two in-flight calls of one team share: a cancel for it names neither. */
export const AMBIGUOUS = '?';
/** A call's entry outlives no call: the longest a client may hold a tools/call open. */
export const ENTRY_TTL_SECONDS = 24 * 3600;

/** A JSON-RPC id as the registry keys it: the number 1 and the string "1" are different ids. */
export function requestIdKey(requestId: string | number): string {
  return `${typeof requestId}:${String(requestId)}`;
}
