import type { FetchLike } from '@modelcontextprotocol/client';
import { buildDiscoveryUrls, requestJwtAuthorizationGrant } from '@modelcontextprotocol/client';
import type { OAuthCredential } from '@switchyard/contracts';
import { z } from 'zod';
import { messageOf, recordingFetch, statusNotingFetch } from './oauth-fetch.ts';
import { OAuthProblem } from './oauth-problem.ts';

export type EnterpriseManaged = Extract<OAuthCredential, { type: 'enterprise_managed_authorization' }>;

/**
 * RFC 8693 token exchange at the enterprise identity provider (SDK: requestJwtAuthorizationGrant): the
 * team's ID token for an ID-JAG naming `audience` (the MCP server's authorization server) and `resource`
 * (the MCP server). Its failures are OAuthProblems naming the identity provider's URLs: an OAuth error
 * answer (400 / 401 with an `error`) is the identity provider refusing this ID token or client; no
 * metadata, a 404, a 5xx, another answer or none is it being unusable.
 */
export async function exchangeIdToken(
  { idp }: EnterpriseManaged,
  request: {
    audience: string;
    resource: string;
    idToken: string;
    scope: string | undefined;
    fetchFn: FetchLike;
  },
): Promise<string> {
  // The config gives exactly one of the two.
  const tokenEndpoint = idp.tokenEndpoint ?? (await idpTokenEndpoint(String(idp.issuer), request.fetchFn));
  const noting = statusNotingFetch(request.fetchFn);
  try {
    const grant = await requestJwtAuthorizationGrant({
      tokenEndpoint,
      audience: request.audience,
      resource: request.resource,
      idToken: request.idToken,
      clientId: idp.clientId,
      ...(idp.clientSecret ? { clientSecret: idp.clientSecret } : {}),
      ...(request.scope ? { scope: request.scope } : {}),
      fetchFn: noting.fetch,
    });
    return grant.jwtAuthGrant;
  } catch (error) {
    const status = noting.status();
    // The SDK quotes an OAuth error answer (`Token exchange failed: <error> - <description>`); any other
    // body it would quote whole is not repeated: it is the identity provider's, and could echo the request.
    const oauthError = /^Token exchange failed: /.test(messageOf(error)) ? `: ${messageOf(error)}` : '';
    if ((status === 400 || status === 401) && oauthError) {
      throw new OAuthProblem(
        'refused',
        `identity provider token endpoint ${tokenEndpoint} refused the token exchange${oauthError}`,
      );
    }
    throw new OAuthProblem(
      'unavailable',
      status === undefined
        ? `identity provider token endpoint ${tokenEndpoint} could not be reached: ${messageOf(error)}`
        : `identity provider token endpoint ${tokenEndpoint} answered HTTP ${status}`,
    );
  }
}

/**
 * Only what the exchange needs of the identity provider's metadata. An enterprise identity provider is
 * an OpenID provider first, and the SDK's discovery insists on a complete OpenID document (subject types,
 * ID token algorithms…) that a token exchange never reads.
 */
const IdpMetadataSchema = z.looseObject({ issuer: z.string(), token_endpoint: z.url() });

/**
 * The identity provider's token endpoint, from its RFC 8414 or OpenID metadata at the well-known URLs
 * of its issuer (the SDK's buildDiscoveryUrls, in its order). The document must name that issuer
 * (RFC 8414 §3.3): one for another issuer is not this identity provider's.
 */
async function idpTokenEndpoint(issuer: string, fetchFn: FetchLike): Promise<string> {
  const recording = recordingFetch(fetchFn);
  for (const { url } of buildDiscoveryUrls(issuer)) {
    const response = await recording
      .fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
      .catch(() => undefined);
    if (!response?.ok) {
      await response?.body?.cancel();
      continue;
    }
    const metadata = IdpMetadataSchema.safeParse(await response.json().catch(() => undefined));
    if (!metadata.success) continue;
    if (metadata.data.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
      throw new OAuthProblem(
        'unavailable',
        `the metadata at ${url} is of issuer ${metadata.data.issuer}, not of identity provider ${issuer}`,
      );
    }
    return metadata.data.token_endpoint;
  }
  throw new OAuthProblem(
    'unavailable',
    `no metadata of identity provider ${issuer} names a token endpoint: tried ${recording.tried()}`,
  );
}
