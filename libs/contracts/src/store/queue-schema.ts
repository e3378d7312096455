import { ConfigError } from '../env-expansion.ts';

/**
 * The PostgreSQL schema that holds a deployment's queues (BullMQ's tables) and the queue-side state
 * that must be lost together with them (docs/postgres-backend.md §1): the prefix with every "." and "-"
 * turned into "_", since BullMQ's schema names allow neither. `switchyard` stays `switchyard_queues`, so
 * it never meets the job store's default schema.
 */
export function queueSchemaName(prefix: string): string {
  const schema = `${prefix.toLowerCase().replace(/[.-]/g, '_')}_queues`;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigError(
      'SWITCHYARD_PREFIX',
      `"${prefix}" gives the queue schema "${schema}", which PostgreSQL does not take (start with a letter, at most 56 characters)`,
    );
  }
  return schema;
}
