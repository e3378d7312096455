import { createHash } from 'node:crypto';

/** PostgreSQL truncates identifiers past NAMEDATALEN - 1 bytes, and pg_notify refuses longer channels. */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The largest NOTIFY payload PostgreSQL takes in its default build ("shorter than 8000 bytes"); a
 * little is left over so a payload measured in UTF-8 never meets the limit on the edge.
 */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7_990;

/**
 * The NOTIFY channel of one topic in a queue schema: `<schema>_<topic>`. A schema is [a-z0-9_] already
 * (queue-schema.ts), but a long one would make the channel longer than an identifier may be, and LISTEN
 * would then truncate it while pg_notify refuses it: such a name keeps its start and gains a hash of the
 * whole, so two long schemas never share a channel.
 */
export function notificationChannel(schema: string, topic: string): string {
  const name = `${schema}_${topic}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
    throw new Error(`"${name}" is not a valid notification channel (schema "${schema}", topic "${topic}")`);
  }
  if (name.length <= MAX_CHANNEL_LENGTH) return name;
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 8);
  return `${schema.slice(0, MAX_CHANNEL_LENGTH - topic.length - hash.length - 2)}_${hash}_${topic}`;
}

/** A channel as an identifier in LISTEN/UNLISTEN (notificationChannel allows nothing that needs escaping). */
export function quotedChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`refusing to LISTEN on "${channel}"`);
  return `"${channel}"`;
}

export function payloadBytes(payload: string): number {
  return Buffer.byteLength(payload, 'utf8');
}
