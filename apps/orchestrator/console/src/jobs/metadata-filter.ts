/**
 * The job list's metadata filter. People type `key=value` pairs (spaces or commas between them); the
 * page's URL and the API both take them as `metadata[<key>]=<value>`, so a filtered list links as the
 * API query does (/console/jobs?metadata[ticket]=OPS-1).
 */
const PARAM = /^metadata\[(.+)\]$/;

/** `key=value` pairs from what a person typed, or the first pair that is not one. */
export function parseMetadataPairs(text: string): { pairs: Record<string, string> } | { error: string } {
  const pairs: Record<string, string> = {};
  for (const token of text.split(/[\s,]+/).filter(Boolean)) {
    const at = token.indexOf('=');
    if (at <= 0) return { error: `"${token}" is not key=value` };
    pairs[token.slice(0, at)] = token.slice(at + 1);
  }
  return { pairs };
}

/** The pairs as typed again (the filter box shows the URL's filter). */
export function formatMetadataPairs(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
}

/** The URL's `metadata[<key>]` parameters. */
export function metadataFromParams(params: URLSearchParams): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [name, value] of params) {
    const key = PARAM.exec(name)?.[1];
    if (key) pairs[key] = value;
  }
  return pairs;
}

/** Writes `pairs` into `params` as `metadata[<key>]=<value>`. */
export function setMetadataParams(params: URLSearchParams, pairs: Record<string, string>): void {
  for (const [key, value] of Object.entries(pairs)) params.set(`metadata[${key}]`, value);
}
