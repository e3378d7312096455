import type { SwitchyardClient } from '@switchyard/client';
import type { ExitCode } from './exit-codes.ts';

/**
 * Wraps a command's work as a commander action: the work gets the client (from --url/--api-key or the
 * environment) and the command's arguments, and answers the exit code.
 */
export type Act = <A extends unknown[]>(
  run: (client: SwitchyardClient, ...args: A) => Promise<ExitCode | undefined>,
) => (...args: A) => Promise<void>;
