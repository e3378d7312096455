import { HttpException } from '@nestjs/common';
import { z } from 'zod';

/**
 * The kinds of error the API answers with, each with a stable RFC 9457 `type` URI. Clients switch on
 * `type`, never on `detail` (which is for people and may change). A URN, not a URL: there is no page
 * to fetch; docs/operations.md and the OpenAPI document describe each kind.
 */
export const PROBLEM_KINDS = {
  'validation-failed': { status: 400, title: 'The request is invalid' },
  'malformed-body': { status: 400, title: 'The request body is not valid JSON' },
  'unknown-tools': { status: 400, title: 'The job names tools this team cannot call' },
  'invalid-cursor': { status: 400, title: 'The pagination cursor is not one this API issued' },
  unauthorized: { status: 401, title: 'Missing or unknown API key' },
  forbidden: { status: 403, title: 'This key may not do this' },
  'not-found': { status: 404, title: 'No such resource' },
  conflict: { status: 409, title: 'The resource is not in a state that allows this' },
  'payload-too-large': { status: 413, title: 'The request body is too large' },
  'unsupported-media-type': { status: 415, title: 'The request body must be application/json' },
  'idempotency-key-reused': {
    status: 422,
    title: 'This Idempotency-Key was used with a different request body',
  },
  'too-many-requests': { status: 429, title: 'Too many requests; see Retry-After' },
  'internal-error': { status: 500, title: 'Internal error' },
  'dependency-unavailable': { status: 503, title: 'A dependency is unavailable; see Retry-After' },
  'http-error': { status: 400, title: 'HTTP error' },
} as const satisfies Record<string, { status: number; title: string }>;
export type ProblemKind = keyof typeof PROBLEM_KINDS;

export const problemType = (kind: ProblemKind): string => `urn:switchyard:problem:${kind}`;
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One offending field of a request: where it is (`calls.0.tool`, or `(root)`) and what is wrong. */
export const ProblemFieldErrorSchema = z
  .object({ path: z.string(), message: z.string() })
  .meta({ id: 'ProblemFieldError' });

export const ProblemSchema = z
  .looseObject({
    type: z.enum(Object.keys(PROBLEM_KINDS).map((kind) => problemType(kind as ProblemKind)) as [string]),
    title: z.string(),
    status: z.int().min(400).max(599),
    detail: z.string(),
    instance: z.string().meta({ description: 'The request path this problem is about' }),
    errors: z
      .array(ProblemFieldErrorSchema)
      .optional()
      .meta({ description: 'validation-failed: every offending field (at most 20)' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details; `type` is stable per kind of error',
    example: {
      type: problemType('not-found'),
      title: PROBLEM_KINDS['not-found'].title,
      status: 404,
      detail: 'no job job_00000000-0000-4000-8000-000000000000',
      instance: '/v1/jobs/job_00000000-0000-4000-8000-000000000000',
    },
  });
export type Problem = z.infer<typeof ProblemSchema>;

/** An error the API answers as a problem of a known kind, with a detail and optional extension members. */
export class ProblemException extends HttpException {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    status: number = PROBLEM_KINDS[kind].status,
  ) {
    super(detail, status);
  }
}

/** The kind for an HTTP status thrown without one (Nest's own exceptions, libraries). */
export function kindForStatus(status: number): ProblemKind {
  const byStatus: Record<number, ProblemKind> = {
    400: 'validation-failed',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not-found',
    409: 'conflict',
    413: 'payload-too-large',
    415: 'unsupported-media-type',
    429: 'too-many-requests',
    500: 'internal-error',
    503: 'dependency-unavailable',
  };
  return byStatus[status] ?? (status >= 500 ? 'internal-error' : 'http-error');
}
