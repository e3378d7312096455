import type { FetchLike } from '@modelcontextprotocol/client';

/** A fetch that notes each URL it was asked for and how it answered, for an error that says what was tried. */
export function recordingFetch(base: FetchLike): { fetch: FetchLike; tried: () => string } {
  const seen: string[] = [];
  return {
    fetch: async (url, init) => {
      try {
        const response = await base(url, init);
        seen.push(`${String(url)} (HTTP ${response.status})`);
        return response;
      } catch (error) {
        seen.push(`${String(url)} (${(error as Error).message})`);
        throw error;
      }
    },
    tried: () => seen.join(', ') || 'nothing',
  };
}

/**
 * A fetch that keeps the status of the last answer: what tells an OAuth error answer (the server deciding
 * about this credential) from an endpoint that is not usable at all, once the SDK has turned either into
 * an Error. `undefined`: nothing answered.
 */
export function statusNotingFetch(base: FetchLike): { fetch: FetchLike; status: () => number | undefined } {
  let status: number | undefined;
  return {
    fetch: async (url, init) => {
      const response = await base(url, init);
      status = response.status;
      return response;
    },
    status: () => status,
  };
}

/** An error's message on one line (a schema error's is indented JSON): it ends up in an outcome's text. */
export function messageOf(error: unknown): string {
  return (error as Error).message.replace(/\s+/g, ' ').trim();
}
