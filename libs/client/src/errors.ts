import type { Problem, ProblemType } from './types.ts';

const PROBLEM_TYPE_PREFIX = 'urn:switchyard:problem:';

/** The kind of a problem: its `type` without the URN prefix (`not-found`, `validation-failed`, …). */
export type ProblemKind = ProblemType extends `${typeof PROBLEM_TYPE_PREFIX}${infer Kind}` ? Kind : never;

/**
 * The API answered with an error. `problem` is its RFC 9457 body when it sent one (every error of the
 * orchestrator does; a proxy in between may not): switch on `problem.type` / `kind`, never on `detail`.
 */
export class SwitchyardApiError extends Error {
  override readonly name = 'SwitchyardApiError';
  readonly kind: ProblemKind | undefined;

  constructor(
    /** What was asked, e.g. `POST /v1/jobs`. */
    readonly operation: string,
    readonly status: number,
    readonly problem: Problem | undefined,
    /** The body as received when it was not problem details. */
    readonly body?: unknown,
    /** Seconds to wait before retrying (429, 503), from Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${operation}: ${status} ${describe(problem, body)}`);
    this.kind = problem?.type.startsWith(PROBLEM_TYPE_PREFIX)
      ? (problem.type.slice(PROBLEM_TYPE_PREFIX.length) as ProblemKind)
      : undefined;
  }
}

/** The API could not be reached (refused, reset, DNS, timed out): no answer at all. */
export class SwitchyardConnectionError extends Error {
  override readonly name = 'SwitchyardConnectionError';

  constructor(
    readonly operation: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${operation}: cannot reach ${url}: ${reason(cause)}`, { cause });
  }
}

/** The error for an answer that was not a success, with the problem details when the body is one. */
export function apiError(operation: string, response: Response, body: unknown): SwitchyardApiError {
  const retryAfter = Number(response.headers.get('retry-after'));
  return new SwitchyardApiError(
    operation,
    response.status,
    isProblem(body) ? body : undefined,
    isProblem(body) ? undefined : body,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

export function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const { type, status, title } = body as Record<string, unknown>;
  return typeof type === 'string' && typeof status === 'number' && typeof title === 'string';
}

function describe(problem: Problem | undefined, body: unknown): string {
  if (problem) {
    // The API's detail usually names the offending fields already (`invalid job id: (root): not a job
    // id`): only the ones it does not name are added, so no error is repeated in its own message.
    const fields = (problem.errors ?? [])
      .map((error) => `${error.path}: ${error.message}`)
      .filter((field) => !problem.detail.includes(field))
      .join('; ');
    return `${problem.title}: ${problem.detail}${fields ? ` (${fields})` : ''}`;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text ? text.slice(0, 500) : '(no body)';
}

/** fetch's TypeError says only "fetch failed"; the reason (ECONNREFUSED, …) is in its cause. */
function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return cause?.code ?? cause?.message ?? error.message;
}
