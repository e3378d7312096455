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

export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: string[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(path.join('.'), `environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandEnv(item, env, [...path, String(index)]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, [...path, key])]),
    );
  }
  return value;
}
