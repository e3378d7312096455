const REDACTED = '[redacted]';

/**
 * OpenAI-compatible servers quote a refused key in their 401 ("Incorrect API key provided: sk-…"), in
 * full or masked; whatever follows that phrase is dropped, whoever's key it was.
 */
const QUOTED_KEY = /(incorrect api key provided:?\s*)\S+/gi;

/**
 * A provider's error text without the key the call was made with: the text becomes a job's `error`, its
 * events and log lines, which the team (and operators) read, and the key must appear in none of them.
 */
export function scrubSecret(text: string, secret: string | undefined): string {
  const quoted = text.replace(QUOTED_KEY, `$1${REDACTED}`);
  return secret ? quoted.split(secret).join(REDACTED) : quoted;
}
