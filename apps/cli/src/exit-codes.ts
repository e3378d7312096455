/**
 * How `switchyard` exits. A command that waits for a job (`jobs watch`, `jobs submit --watch`) exits
 * with the code of the job's end, so a script can branch on it; other commands exit 0 when done.
 */
export const EXIT = {
  /** Done; a watched job succeeded. */
  ok: 0,
  /** A watched job failed. */
  failed: 1,
  /** Bad usage: unknown command or option, missing argument, a job file or flag value that is wrong. */
  usage: 2,
  /** A watched batch completed with errors: every call ended, not all `ok`. */
  completedWithErrors: 3,
  /** A watched job was cancelled. */
  cancelled: 4,
  /** A watched job waits for input (a question or an approval): answer it, then watch again. */
  inputRequired: 5,
  /** The API refused the request (its problem details are printed): bad key, no such job, 4xx/5xx. */
  apiError: 6,
  /** The API could not be reached, or the connection was lost for good. */
  unreachable: 7,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code for the status a watched job stopped at. */
export function exitCodeForStatus(status: string): ExitCode {
  switch (status) {
    case 'succeeded':
      return EXIT.ok;
    case 'completed_with_errors':
      return EXIT.completedWithErrors;
    case 'cancelled':
      return EXIT.cancelled;
    case 'input_required':
      return EXIT.inputRequired;
    default:
      return EXIT.failed;
  }
}
