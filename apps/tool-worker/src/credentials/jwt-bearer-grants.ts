import type {
  FetchLike,
  OAuthClientMetadata,
  OAuthClientProvider,
  StoredOAuthClientInformation,
} from '@modelcontextprotocol/client';
import { CrossAppAccessProvider } from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';
import { type EnterpriseManaged, exchangeIdToken } from './id-jag-exchange.ts';
import type { AuthorizationServer } from './oauth-flows.ts';

type WorkloadIdentity = Extract<OAuthCredential, { type: 'workload_identity' }>;

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * The RFC 7523 §2.1 JWT bearer grant with the platform's JWT as the assertion, for the SDK's fetchToken.
 * The worker has no secret: a public client, its `client_id` in the request (the SDK picks `none` when
 * there is no secret). A headless grant: nothing here ever redirects anyone.
 */
class WorkloadIdentityProvider implements OAuthClientProvider {
  readonly redirectUrl = undefined;
  readonly clientMetadata: OAuthClientMetadata;

  constructor(
    private readonly client: StoredOAuthClientInformation,
    private readonly assertion: string,
    scope: string | undefined,
  ) {
    this.clientMetadata = {
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: 'none',
      ...(scope ? { scope } : {}),
    };
  }

  clientInformation(): StoredOAuthClientInformation {
    return this.client;
  }

  tokens(): undefined {
    return undefined;
  }

  saveTokens(): void {}

  redirectToAuthorization(): never {
    throw new Error('a workload identity never redirects anyone');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): never {
    throw new Error('a workload identity has no authorization code');
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const params = new URLSearchParams({ grant_type: JWT_BEARER, assertion: this.assertion });
    if (scope) params.set('scope', scope);
    return params;
  }
}

export function workloadIdentityProvider(
  credential: WorkloadIdentity,
  server: AuthorizationServer,
  assertion: string,
): OAuthClientProvider {
  return new WorkloadIdentityProvider(
    { client_id: credential.clientId, issuer: server.url },
    assertion,
    credential.scope,
  );
}

/**
 * Enterprise-managed authorization (SEP-990) with the SDK's CrossAppAccessProvider: at the token request
 * it asks for an ID-JAG (exchangeIdToken), which it presents as a JWT bearer grant, the client
 * authenticated by its secret at the MCP server's authorization server.
 */
export function enterpriseManagedProvider(
  credential: EnterpriseManaged,
  server: AuthorizationServer,
  idToken: string,
  fetchFn: FetchLike,
): OAuthClientProvider {
  const provider = new CrossAppAccessProvider({
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
    expectedIssuer: server.url,
    fetchFn,
    assertion: (context) =>
      exchangeIdToken(credential, {
        audience: context.authorizationServerUrl,
        resource: context.resourceUrl,
        idToken,
        scope: context.scope,
        fetchFn,
      }),
  });
  // What the SDK's auth() would have saved after its discovery: the ID-JAG is for this authorization
  // server (its issuer, SEP-990's audience) and this MCP server (the RFC 9728 resource), no other.
  provider.saveAuthorizationServerUrl(server.issuer);
  provider.saveResourceUrl?.(server.resource);
  return provider;
}
