/**
 * Text that PostgreSQL `jsonb` (and many JSON consumers) refuse: NUL characters and unpaired UTF-16
 * surrogates. Tool results are cleaned of them (they are the server's bytes, not ours to reject);
 * request bodies containing them are refused with a 400 naming the field.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function isSafeText(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return !UNSAFE.test(text);
}

/** Replaces every NUL and lone surrogate with U+FFFD. */
export function safeText(text: string): string {
  return text.replace(UNSAFE, '\ufffd');
}

/** A deep copy of a JSON value with every string and key passed through `safeText`. */
export function safeJson<T>(value: T): T {
  if (typeof value === 'string') return safeText(value) as T;
  if (Array.isArray(value)) return value.map((item) => safeJson(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [safeText(key), safeJson(item)]),
    ) as T;
  }
  return value;
}

/**
 * The first problem of a JSON value received from a client: too deep, or a string or key with
 * unstorable text. Returns the dotted path and the reason, or undefined when the value is fine.
 */
export function findUnsafeJson(
  value: unknown,
  maxDepth: number,
  path = '',
): { path: string; reason: string } | undefined {
  const here = path || '(root)';
  if (typeof value === 'string') {
    return isSafeText(value)
      ? undefined
      : { path: here, reason: 'contains a NUL character or an unpaired surrogate' };
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (maxDepth <= 0) return { path: here, reason: 'is nested too deeply' };
  const entries = Array.isArray(value)
    ? value.map((item, index) => [String(index), item] as const)
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (!isSafeText(key))
      return { path: here, reason: 'has a key with a NUL character or an unpaired surrogate' };
    const problem = findUnsafeJson(item, maxDepth - 1, path ? `${path}.${key}` : key);
    if (problem) return problem;
  }
  return undefined;
}
