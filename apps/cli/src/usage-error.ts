/** The command line itself is wrong (exit 2): the message names the option, argument or file. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
