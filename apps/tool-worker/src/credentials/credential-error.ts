/**
 * Why a call could not carry its team's credential. Each kind is refused before the server ran anything
 * (a 401 is the server refusing to run it), so the call ends with `executed: no` and is never retried: a
 * retry would only hit the same wall. `unavailable` ends `unavailable` (the server's authorization
 * cannot be used by anyone just now); the others end `failed`.
 */
export type CredentialProblem =
  /** servers.<name>.auth has neither an entry for the team nor a default. */
  | 'missing'
  /** The server answered 401 to a fresh credential (after one re-acquire). */
  | 'rejected'
  /** The authorization server refused to issue a token (an OAuth error answer: invalid_client, invalid_grant…). */
  | 'unobtainable'
  /**
   * The server's authorization could not be used: no metadata naming a token endpoint, a token endpoint
   * that is missing or failing, nothing answering. Tried again only after a pause (credential-source.ts).
   */
  | 'unavailable'
  /** A stdio server given the team's secrets did not start (or did not complete its handshake). */
  | 'unstartable';

export class CredentialError extends Error {
  override readonly name = 'CredentialError';

  constructor(
    readonly problem: CredentialProblem,
    readonly server: string,
    /** The team, or undefined for the worker's own session credential. */
    readonly team: string | undefined,
    detail?: string,
  ) {
    super(describe(problem, server, team) + (detail ? `: ${detail}` : ''));
  }
}

function describe(problem: CredentialProblem, server: string, team: string | undefined): string {
  const who = team === undefined ? 'the worker session' : `team ${team}`;
  const whose = team === undefined ? "the worker session's" : `team ${team}'s`;
  switch (problem) {
    case 'missing':
      return team === undefined
        ? `the call names no team and server ${server} has no default credential`
        : `${who} has no credential for server ${server}`;
    case 'rejected':
      return `server ${server} rejected ${whose} credential`;
    case 'unobtainable':
    case 'unavailable':
      return `${whose} credential for server ${server} could not be obtained`;
    case 'unstartable':
      return `server ${server} did not start with ${whose} credential`;
  }
}
