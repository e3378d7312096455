/**
 * The top-level keys a JSON log line holds more than once. JSON.parse keeps the last of them silently,
 * so a repeated field is visible only in the raw text: this scans it, skipping strings and nested
 * values. A line that is not a JSON object has none.
 */
export function repeatedKeys(raw: string): string[] {
  if (!raw.startsWith('{')) return [];
  const seen = new Set<string>();
  const repeated: string[] = [];
  let depth = 0;
  for (let at = 0; at < raw.length; at++) {
    const char = raw[at];
    if (char === '"') {
      const end = stringEnd(raw, at);
      const isKey =
        depth === 1 &&
        raw
          .slice(end + 1)
          .trimStart()
          .startsWith(':');
      if (isKey) {
        const key = JSON.parse(raw.slice(at, end + 1)) as string;
        if (seen.has(key)) repeated.push(key);
        seen.add(key);
      }
      at = end;
    } else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth--;
  }
  return repeated;
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(raw: string, start: number): number {
  for (let at = start + 1; at < raw.length; at++) {
    if (raw[at] === '\\') at++;
    else if (raw[at] === '"') return at;
  }
  return raw.length;
}
