import { UsageError } from '../usage-error.ts';

/** Repeated `--metadata key=value` flags as one record (for submitting and for filtering a list). */
export function metadataFrom(pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const separator = pair.indexOf('=');
      if (separator <= 0) throw new UsageError(`--metadata "${pair}": write <key>=<value>`);
      return [pair.slice(0, separator), pair.slice(separator + 1)];
    }),
  );
}
