import { SwitchyardApiError } from './api/types.ts';

/** What the API refused, as it said it (problem detail and type), or what went wrong on the way. */
export function ErrorNote({ error }: { error: unknown }) {
  const text =
    error instanceof SwitchyardApiError
      ? `${error.status} ${error.problem?.title ?? ''}: ${error.problem?.detail ?? error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <p className="error" role="alert" data-testid="error">
      {text}
    </p>
  );
}
