import type { AuthorizationServerMetadata, FetchLike, OAuthTokens } from '@modelcontextprotocol/client';
import {
  ClientCredentialsProvider,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  fetchToken,
  OAuthError,
  OAuthErrorCode,
  PrivateKeyJwtProvider,
  refreshAuthorization,
} from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';

/** Where one server's tokens come from, as the MCP authorization spec has the client discover it. */
export interface AuthorizationServer {
  /** The issuer: part of the token cache key. */
  issuer: string;
  url: string;
  metadata: AuthorizationServerMetadata;
  /** RFC 8707 resource indicator: tokens are requested for this server only. */
  resource: string;
}

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

/** A fetch that notes each URL it was asked for and how it answered, for an error that says what was tried. */
function recordingFetch(base: FetchLike): { fetch: FetchLike; tried: () => string } {
  const seen: string[] = [];
  return {
    fetch: async (url, init) => {
      try {
        const response = await base(url, init);
        seen.push(`${String(url)} (HTTP ${response.status})`);
        return response;
      } catch (error) {
        seen.push(`${String(url)} (${(error as Error).message})`);
        throw error;
      }
    },
    tried: () => seen.join(', ') || 'nothing',
  };
}

/** An error's message on one line (a schema error's is indented JSON): it ends up in an outcome's text. */
function messageOf(error: unknown): string {
  return (error as Error).message.replace(/\s+/g, ' ').trim();
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * Discovery (SDK helpers), in the MCP authorization spec's order: the server's RFC 9728
 * protected-resource metadata at the URL its 401 named (`resourceMetadataUrl`), else at the well-known
 * URLs; the authorization server it names (or the configured issuer, which must be among those it
 * advertises: the client secret is shown to no other); that server's RFC 8414 / OpenID metadata, which
 * gives the token endpoint. No metadata means no token endpoint: nothing is guessed.
 */
export async function discoverAuthorizationServer(
  serverUrl: string,
  configuredIssuer: string | undefined,
  resourceMetadataUrl: URL | undefined,
  fetchFn: FetchLike = fetch,
): Promise<AuthorizationServer> {
  const recording = recordingFetch(fetchFn);
  const resourceMetadata = await discoverOAuthProtectedResourceMetadata(
    serverUrl,
    resourceMetadataUrl ? { resourceMetadataUrl } : {},
    recording.fetch,
  ).catch((error: unknown) => {
    if (resourceMetadataUrl) {
      // The server itself pointed there: a guess elsewhere would only find another server's metadata.
      throw new OAuthProblem(
        'unavailable',
        `the protected-resource metadata the server named could not be read (${messageOf(error)}; tried ${recording.tried()})`,
      );
    }
    return undefined;
  });
  const advertised = resourceMetadata?.authorization_servers ?? [];
  if (
    configuredIssuer &&
    advertised.length > 0 &&
    !advertised.some((url) => sameUrl(url, configuredIssuer))
  ) {
    throw new OAuthProblem(
      'unavailable',
      `the server advertises authorization server(s) ${advertised.join(', ')}, not the configured issuer ${configuredIssuer}`,
    );
  }
  // Without protected-resource metadata (a 2025-03-26 server) the MCP server's origin is the authorization
  // server, as the SDK's discoverOAuthServerInfo has it; its metadata must still be found.
  const url = configuredIssuer ?? advertised[0] ?? String(new URL('/', serverUrl));
  const metadata = await discoverAuthorizationServerMetadata(url, { fetchFn: recording.fetch }).catch(
    (error: unknown) => {
      throw new OAuthProblem(
        'unavailable',
        `the metadata of authorization server ${url} could not be read (${messageOf(error)}; tried ${recording.tried()})`,
      );
    },
  );
  if (!metadata) {
    throw new OAuthProblem(
      'unavailable',
      `no OAuth metadata (RFC 9728 / RFC 8414 / OpenID) names a token endpoint: tried ${recording.tried()}`,
    );
  }
  return {
    issuer: metadata.issuer,
    url,
    metadata,
    resource: resourceMetadata?.resource ?? serverUrl,
  };
}

/**
 * One token request (SDK helpers): the client credentials grant (the client authenticated by its secret,
 * or by a signed JWT for `private_key_jwt`), or the refresh token grant with the newest refresh token
 * known (a rotated one from the cache, else the operator's). Failures are OAuthProblems naming the endpoint.
 */
export async function requestToken(
  credential: OAuthCredential,
  server: AuthorizationServer,
  refreshToken: string | undefined,
  fetchFn: FetchLike = fetch,
): Promise<OAuthTokens> {
  const endpoint = server.metadata.token_endpoint;
  let status: number | undefined;
  const noting: FetchLike = async (url, init) => {
    const response = await fetchFn(url, init);
    status = response.status;
    return response;
  };
  try {
    return await send(credential, server, refreshToken, noting);
  } catch (error) {
    if (error instanceof OAuthProblem) throw error;
    // An OAuth error answer (RFC 6749 §5.2) is the authorization server deciding about this credential;
    // anything else (a 404 page, a 5xx, no answer) says the endpoint itself is not usable.
    const refused =
      error instanceof OAuthError &&
      error.code !== OAuthErrorCode.ServerError &&
      status !== undefined &&
      status >= 400 &&
      status < 500;
    if (refused) {
      throw new OAuthProblem(
        'refused',
        `token endpoint ${endpoint} refused it: ${error.code} (${error.message})`,
      );
    }
    throw new OAuthProblem(
      'unavailable',
      status === undefined
        ? `token endpoint ${endpoint} could not be reached: ${messageOf(error)}`
        : `token endpoint ${endpoint} answered HTTP ${status}`,
    );
  }
}

function send(
  credential: OAuthCredential,
  server: AuthorizationServer,
  refreshToken: string | undefined,
  fetchFn: FetchLike,
): Promise<OAuthTokens> {
  const options = { metadata: server.metadata, resource: server.resource, fetchFn };
  const scope = credential.scope ? { scope: credential.scope } : {};
  switch (credential.type) {
    case 'client_credentials':
      return fetchToken(
        new ClientCredentialsProvider({
          clientId: credential.clientId,
          clientSecret: credential.clientSecret,
          expectedIssuer: server.url,
          ...scope,
        }),
        server.url,
        options,
      );
    case 'private_key_jwt':
      // RFC 7523 §2.2: a fresh assertion per request, its audience the authorization server's issuer.
      return fetchToken(
        new PrivateKeyJwtProvider({
          clientId: credential.clientId,
          privateKey: credential.privateKey,
          algorithm: credential.algorithm,
          expectedIssuer: server.url,
          ...scope,
        }),
        server.url,
        options,
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
      });
  }
}
