import type { AuthorizationServerMetadata, FetchLike, OAuthTokens } from '@modelcontextprotocol/client';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  OAuthError,
  OAuthErrorCode,
} from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';
import { messageOf, recordingFetch, statusNotingFetch } from './oauth-fetch.ts';
import { OAuthProblem } from './oauth-problem.ts';
import { type GrantInputs, sendTokenRequest } from './token-grants.ts';

export { OAuthProblem } from './oauth-problem.ts';

/** Where one server's tokens come from, as the MCP authorization spec has the client discover it. */
export interface AuthorizationServer {
  /** The issuer: part of the token cache key. */
  issuer: string;
  url: string;
  metadata: AuthorizationServerMetadata;
  /** RFC 8707 resource indicator: tokens are requested for this server only. */
  resource: string;
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
 * One token request (token-grants.ts has each grant), its failure an OAuthProblem naming the endpoint:
 * `refused` when the authorization server answered with an OAuth error about this credential,
 * `unavailable` when the endpoint itself is not usable.
 */
export async function requestToken(
  credential: OAuthCredential,
  server: AuthorizationServer,
  inputs: GrantInputs = {},
  fetchFn: FetchLike = fetch,
): Promise<OAuthTokens> {
  const endpoint = server.metadata.token_endpoint;
  const noting = statusNotingFetch(fetchFn);
  try {
    return await sendTokenRequest(credential, server, inputs, noting.fetch);
  } catch (error) {
    if (error instanceof OAuthProblem) throw error;
    const status = noting.status();
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
