import { z } from 'zod';
import { ProblemException } from '../http/problem.ts';
import { JOB_STATUSES } from './job-request.ts';
import { JobSummarySchema } from './job-view.ts';

export const MAX_LIST_LIMIT = 200;
export const DEFAULT_LIST_LIMIT = 50;
/** `metadata[<key>]` (OpenAPI deepObject, what generated clients send) or `metadata.<key>`. */
const METADATA_KEY = /^metadata(?:\[([^\][]{1,100})\]|\.(.{1,100}))$/;

/**
 * A query parameter is text that the schema converts; clients should see the converted type
 * (OpenAPI describes the parameter's value, not its wire text). Replaces the generated schema.
 */
function documentedAs(schema: Record<string, unknown>) {
  return ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    const { description } = jsonSchema;
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, { ...schema, ...(description ? { description } : {}) });
  };
}

/** Query strings repeat a key (`status=a&status=b`) or list values with commas (`status=a,b`). */
const statusList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(',')))
  .pipe(z.array(z.enum(JOB_STATUSES)).min(1).max(JOB_STATUSES.length));

/** The query of `GET /v1/jobs`, as documented; `metadata.<key>=<value>` filters are read separately. */
export const JobListQuerySchema = z.strictObject({
  status: statusList.optional().meta({
    description: 'One status or several, repeated (status=a&status=b) or comma-separated',
    // Documented as what it accepts once split: a list of statuses.
    override: documentedAs({ type: 'array', items: { type: 'string', enum: [...JOB_STATUSES] } }),
  }),
  kind: z.enum(['agent', 'batch', 'mcp']).optional(),
  team: z.string().min(1).max(100).optional().meta({
    description:
      "Only this team's jobs. An operator key lists every team's jobs without it; a team key lists only its own, and another team's name is a 403",
  }),
  createdAfter: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'Only jobs created after this instant (ISO 8601)' }),
  createdBefore: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'Only jobs created before this instant (ISO 8601)' }),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.int().min(1).max(MAX_LIST_LIMIT))
    .optional()
    .meta({
      description: `Jobs per page, 1–${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}); more is a 400`,
      override: documentedAs({
        type: 'integer',
        minimum: 1,
        maximum: MAX_LIST_LIMIT,
        default: DEFAULT_LIST_LIMIT,
      }),
    }),
  cursor: z
    .string()
    .max(500)
    .optional()
    .meta({ description: "The previous page's nextCursor; send the same filters with it" }),
});

export const JobListSchema = z
  .object({
    jobs: z.array(JobSummarySchema),
    nextCursor: z.string().nullable().meta({ description: 'null on the last page' }),
  })
  .meta({ id: 'JobList' });

/** Where a page ends: the last job's creation time (PostgreSQL's own text, microseconds kept) and id. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

export interface JobListFilter {
  statuses?: (typeof JOB_STATUSES)[number][];
  kind?: 'agent' | 'batch' | 'mcp';
  team?: string;
  metadata: Record<string, string>;
  createdAfter?: string;
  createdBefore?: string;
  limit: number;
  after?: ListPosition;
}

/** The query of `GET /v1/jobs`; metadata pairs are taken out before the rest is validated. */
export function parseListQuery(query: Record<string, unknown>): JobListFilter {
  const metadata: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    const metadataKey = METADATA_KEY.exec(key)
      ?.slice(1)
      .find((part) => part !== undefined);
    if (metadataKey === undefined && !key.startsWith('metadata')) rest[key] = value;
    else if (metadataKey === undefined || typeof value !== 'string')
      throw invalidQuery(key, 'give one value per metadata key: metadata[<key>]=<value>');
    else metadata[metadataKey] = value;
  }
  const parsed = JobListQuerySchema.safeParse(rest);
  if (!parsed.success) {
    const errors = parsed.error.issues.slice(0, 20).map((issue) => ({
      path: issue.path.map(String).join('.') || '(query)',
      message:
        issue.code === 'unrecognized_keys' ? `unknown parameter(s): ${issue.keys.join(', ')}` : issue.message,
    }));
    throw new ProblemException(
      'validation-failed',
      `invalid job list query: ${errors.map((error) => `${error.path}: ${error.message}`).join('; ')}`,
      { errors },
    );
  }
  const { status, kind, team, createdAfter, createdBefore, limit, cursor } = parsed.data;
  return {
    ...(status ? { statuses: status } : {}),
    ...(kind ? { kind } : {}),
    ...(team ? { team } : {}),
    metadata,
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    limit: limit ?? DEFAULT_LIST_LIMIT,
    ...(cursor !== undefined ? { after: decodeCursor(cursor) } : {}),
  };
}

function invalidQuery(path: string, message: string): ProblemException {
  return new ProblemException('validation-failed', `invalid job list query: ${path}: ${message}`, {
    errors: [{ path, message }],
  });
}

const CursorSchema = z.tuple([
  // PostgreSQL's timestamptz text: 2026-12-01 01:30:00.123456+00
  z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/),
  z.string().regex(/^job_[0-9a-f-]{36}$/),
]);

/** Opaque to clients: base64url of the last listed job's (created_at, id). */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

function decodeCursor(cursor: string): ListPosition {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const parsed = CursorSchema.safeParse(decoded);
  if (!parsed.success)
    throw new ProblemException(
      'invalid-cursor',
      'cursor: not a cursor this API issued; start again without one',
    );
  return { createdAt: parsed.data[0], id: parsed.data[1] };
}
