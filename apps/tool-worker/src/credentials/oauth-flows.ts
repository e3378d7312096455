import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/client';
import {
  ClientCredentialsProvider,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  discoverOAuthServerInfo,
  fetchToken,
  refreshAuthorization,
} from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';

/** Where one server's tokens come from, as the MCP authorization spec has the client discover it. */
export interface AuthorizationServer {
  /** The issuer: part of the token cache key. */
  issuer: string;
  url: string;
  metadata: AuthorizationServerMetadata | undefined;
  /** RFC 8707 resource indicator: tokens are requested for this server only. */
  resource: string;
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * Discovery (SDK helpers): the server's RFC 9728 protected-resource metadata — at the URL its
 * WWW-Authenticate header named, else the well-known one — names the authorization server, whose
 * RFC 8414 / OpenID metadata gives the token endpoint. A configured issuer must be among the servers
 * the resource advertises: the client secret is shown to no other.
 */
export async function discoverAuthorizationServer(
  serverUrl: string,
  configuredIssuer: string | undefined,
  resourceMetadataUrl: URL | undefined,
): Promise<AuthorizationServer> {
  if (configuredIssuer === undefined) {
    const info = await discoverOAuthServerInfo(serverUrl, resourceMetadataUrl ? { resourceMetadataUrl } : {});
    return {
      issuer: info.authorizationServerMetadata?.issuer ?? info.authorizationServerUrl,
      url: info.authorizationServerUrl,
      metadata: info.authorizationServerMetadata,
      resource: info.resourceMetadata?.resource ?? serverUrl,
    };
  }
  const resourceMetadata = await discoverOAuthProtectedResourceMetadata(
    serverUrl,
    resourceMetadataUrl ? { resourceMetadataUrl } : {},
  ).catch(() => undefined);
  const advertised = resourceMetadata?.authorization_servers ?? [];
  if (advertised.length > 0 && !advertised.some((url) => sameUrl(url, configuredIssuer))) {
    throw new Error(
      `the server advertises authorization server(s) ${advertised.join(', ')}, not the configured issuer ${configuredIssuer}`,
    );
  }
  const metadata = await discoverAuthorizationServerMetadata(configuredIssuer);
  return {
    issuer: metadata?.issuer ?? configuredIssuer,
    url: configuredIssuer,
    metadata,
    resource: resourceMetadata?.resource ?? serverUrl,
  };
}

/**
 * One token request (SDK helpers): the client credentials grant, or the refresh token grant with the
 * newest refresh token known (a rotated one from the cache, else the operator's).
 */
export async function requestToken(
  credential: OAuthCredential,
  server: AuthorizationServer,
  refreshToken: string | undefined,
): Promise<OAuthTokens> {
  if (credential.type === 'client_credentials') {
    const provider = new ClientCredentialsProvider({
      clientId: credential.clientId,
      clientSecret: credential.clientSecret,
      expectedIssuer: server.url,
      ...(credential.scope ? { scope: credential.scope } : {}),
    });
    return fetchToken(provider, server.url, {
      ...(server.metadata ? { metadata: server.metadata } : {}),
      resource: server.resource,
    });
  }
  if (!refreshToken) throw new Error('no refresh token was given');
  return refreshAuthorization(server.url, {
    ...(server.metadata ? { metadata: server.metadata } : {}),
    clientInformation: {
      client_id: credential.clientId,
      ...(credential.clientSecret ? { client_secret: credential.clientSecret } : {}),
    },
    refreshToken,
    resource: server.resource,
  });
}
