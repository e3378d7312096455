/**
 * Why no token could be had. `refused`: the authorization server answered the token request with an
 * OAuth error (invalid_client, invalid_grant…) — this credential's own problem. `unavailable`: the
 * server's authorization could not be used at all (no metadata, a token endpoint that is missing or
 * failing, nothing answering) — no credential of any team would fare better. The message names the URLs.
 */
export class OAuthProblem extends Error {
  override readonly name = 'OAuthProblem';

  constructor(
    readonly kind: 'refused' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}
