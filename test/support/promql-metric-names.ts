/** PromQL's keywords and modifiers: identifiers in an expression that are not metric names. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
  'start',
  'end',
]);

/**
 * The metric names a PromQL expression reads (a Grafana query may hold `$variables`): every identifier
 * that is not a function (followed by `(`), a keyword, a label list of by/without/on/ignoring/group_*,
 * a label matcher inside `{…}`, a range or a duration inside `[…]`, or a string.
 */
export function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = match[0];
    const after = bare.slice((match.index ?? 0) + name.length);
    if (/^\s*\(/.test(after) || KEYWORDS.has(name.toLowerCase())) continue;
    // A number's exponent or a duration's unit (`1e3`, `5m` outside brackets after offset) is no name.
    if (/[0-9.]$/.test(bare.slice(0, match.index))) continue;
    names.add(name);
  }
  return [...names];
}

/** The sample names of a Prometheus text exposition (`name{labels} value`, comments skipped). */
export function scrapedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const name = /^([A-Za-z_:][A-Za-z0-9_:]*)/.exec(line)?.[1];
    if (name) names.add(name);
  }
  return names;
}
