import type { JobRequest } from '../api/types.ts';
import { parseMetadataPairs } from '../jobs/metadata-filter.ts';

/** One call of the batch being put together: the tool and the values of its form. */
export interface DraftCall {
  key: number;
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * The batch request the form describes (POST /v1/jobs validates it and says what is wrong), or what
 * keeps it from being one: metadata that is not `key=value` pairs.
 */
export function batchRequest(
  calls: DraftCall[],
  metadataText: string,
): { request: JobRequest } | { error: string } {
  const metadata = parseMetadataPairs(metadataText);
  if ('error' in metadata) return { error: `metadata: ${metadata.error}` };
  return {
    request: {
      kind: 'batch',
      calls: calls.map((call) => ({ tool: call.tool, arguments: call.arguments })),
      ...(Object.keys(metadata.pairs).length > 0 ? { metadata: metadata.pairs } : {}),
    },
  };
}

/** The raw editor's text as a request: JSON (the API checks the rest), or why it is not JSON. */
export function parseRequestJson(text: string): { request: JobRequest } | { error: string } {
  try {
    return { request: JSON.parse(text) as JobRequest };
  } catch (error) {
    return { error: `the request is not JSON: ${(error as Error).message}` };
  }
}
