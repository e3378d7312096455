import type { DpopSession, FetchLike, OAuthClientProvider, OAuthTokens } from '@modelcontextprotocol/client';
import {
  ClientCredentialsProvider,
  fetchToken,
  PrivateKeyJwtProvider,
  refreshAuthorization,
} from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';
import { enterpriseManagedProvider, workloadIdentityProvider } from './jwt-bearer-grants.ts';
import type { AuthorizationServer } from './oauth-flows.ts';
import { OAuthProblem } from './oauth-problem.ts';

/** What a token request needs besides the configuration, read fresh by the credential source. */
export interface GrantInputs {
  /** refresh_token: the newest refresh token known (a rotated one from the cache, else the operator's). */
  refreshToken?: string;
  /** workload_identity: the platform's JWT; enterprise_managed_authorization: the team's ID token. */
  subjectToken?: string;
  /** With `dpop: true`: the identity's key, which signs a proof of possession into the token request. */
  dpop?: DpopSession;
}

/**
 * The token request of one credential type (SDK helpers): the client credentials grant (the client
 * authenticated by its secret, or by a signed JWT for `private_key_jwt`), the refresh token grant, or a
 * JWT bearer grant (jwt-bearer-grants.ts). With a DPoP key the SDK signs a proof into the request and,
 * asked for a nonce (`use_dpop_nonce`), sends it once more with the authorization server's nonce.
 */
export function sendTokenRequest(
  credential: OAuthCredential,
  server: AuthorizationServer,
  { refreshToken, subjectToken, dpop }: GrantInputs,
  fetchFn: FetchLike,
): Promise<OAuthTokens> {
  const options = { metadata: server.metadata, resource: server.resource, fetchFn };
  const scope = credential.scope ? { scope: credential.scope } : {};
  const viaProvider = (provider: OAuthClientProvider) =>
    fetchToken(withDpop(provider, dpop), server.url, { ...options, ...scope });
  switch (credential.type) {
    case 'client_credentials':
      return viaProvider(
        new ClientCredentialsProvider({
          clientId: credential.clientId,
          clientSecret: credential.clientSecret,
          expectedIssuer: server.url,
          ...scope,
        }),
      );
    case 'private_key_jwt':
      // RFC 7523 §2.2: a fresh assertion per request, its audience the authorization server's issuer.
      return viaProvider(
        new PrivateKeyJwtProvider({
          clientId: credential.clientId,
          privateKey: credential.privateKey,
          algorithm: credential.algorithm,
          expectedIssuer: server.url,
          ...scope,
        }),
      );
    case 'refresh_token':
      if (!refreshToken) throw new OAuthProblem('refused', 'no refresh token was given');
      return refreshAuthorization(server.url, {
        ...options,
        clientInformation: {
          client_id: credential.clientId,
          ...(credential.clientSecret ? { client_secret: credential.clientSecret } : {}),
        },
        refreshToken,
        ...(dpop ? { dpop } : {}),
      });
    case 'workload_identity':
      if (!subjectToken) throw new OAuthProblem('refused', 'no workload identity token was given');
      return viaProvider(workloadIdentityProvider(credential, server, subjectToken));
    case 'enterprise_managed_authorization':
      if (!subjectToken) throw new OAuthProblem('refused', 'no ID token was given');
      return viaProvider(enterpriseManagedProvider(credential, server, subjectToken, fetchFn));
  }
}

/** The SDK's token request asks the provider for its DPoP key (`dpop()`): the identity's, when it has one. */
function withDpop(provider: OAuthClientProvider, dpop: DpopSession | undefined): OAuthClientProvider {
  if (dpop) provider.dpop = () => dpop;
  return provider;
}
