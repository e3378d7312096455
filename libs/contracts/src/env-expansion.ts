/**
 * `${VAR}` and `${VAR:-default}` expansion over a parsed YAML tree. Expansion happens on the
 * parsed values (not the raw text) so a secret containing YAML syntax cannot change the document.
 */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
    readonly source?: string,
  ) {
    super(`${source ? `${source}: ` : ''}${key || '(root)'}: ${reason}`);
    this.name = 'ConfigError';
  }
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Dotted-path globs: `*` is one segment, `**` any number. */
export function pathMatcher(patterns: string[]): (path: string) => boolean {
  const regexes = patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .split('.')
          .map((segment) =>
            segment === '**'
              ? '.+'
              : segment === '*'
                ? '[^.]+'
                : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('\\.')}$`,
      ),
  );
  return (path) => regexes.some((regex) => regex.test(path));
}

/**
 * Expands `${VAR}` in every string of `value`. A missing variable is an error naming the key, except
 * under `keepMissing` paths: secrets this process never uses stay as written (a worker needs no team
 * API keys, an orchestrator no MCP server tokens).
 */
export function expandEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: string[] = [],
  keepMissing: (path: string) => boolean = () => false,
): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      if (keepMissing(path.join('.'))) return match;
      throw new ConfigError(path.join('.'), `environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(value)) {
    return value.map((item, index) => expandEnv(item, env, [...path, String(index)], keepMissing));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, [...path, key], keepMissing)]),
    );
  }
  return value;
}
