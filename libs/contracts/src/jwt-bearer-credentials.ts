import { z } from 'zod';
import { exactlyOneOf, jwtValue, oauthCommon, secretFilePath } from './credential-fields.ts';

/**
 * Workload identity federation (RFC 7523 §2.1 JWT bearer grant): the platform the worker runs on gives it
 * a JWT (a Kubernetes projected service-account token, a cloud's workload identity token) and the
 * authorization server trusts that platform's issuer, so there is no client secret at all. The worker is
 * a public client (`client_id` in the request). `assertionFile` is read when a token is needed and read
 * again when it has changed: projected tokens rotate. `assertion` is for a JWT handed over as `${VAR}`.
 */
export const WorkloadIdentitySchema = z
  .strictObject({
    type: z.literal('workload_identity'),
    ...oauthCommon,
    assertion: jwtValue.optional(),
    assertionFile: secretFilePath.optional(),
  })
  .superRefine(exactlyOneOf('assertion', 'assertionFile'));

/** The enterprise identity provider that turns an ID token into an ID-JAG (RFC 8693 token exchange). */
const IdentityProviderSchema = z
  .strictObject({
    /** Its issuer: the token endpoint is read from its RFC 8414 / OpenID metadata. */
    issuer: z.url({ protocol: /^https?$/ }).optional(),
    /** Or the token endpoint itself, for an identity provider that publishes no metadata. */
    tokenEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** The client the worker is at the identity provider (not the one at the MCP server's). */
    clientId: z.string().min(1),
    clientSecret: z.string().min(1).optional(),
  })
  .superRefine(exactlyOneOf('issuer', 'tokenEndpoint'));

/**
 * Enterprise-managed authorization (SEP-990, "cross-app access"): the team's ID token from the enterprise
 * identity provider is exchanged there for an ID-JAG naming the MCP server's authorization server and the
 * MCP server (RFC 8693), which that authorization server takes as a JWT bearer grant (RFC 7523) from the
 * client `clientId` / `clientSecret` registered with it. The ID token is the team's identity: given as
 * `${VAR}`, or as a file something else keeps fresh (read when a token is needed, again when changed).
 */
export const EnterpriseManagedSchema = z
  .strictObject({
    type: z.literal('enterprise_managed_authorization'),
    ...oauthCommon,
    clientSecret: z.string().min(1),
    idp: IdentityProviderSchema,
    idToken: jwtValue.optional(),
    idTokenFile: secretFilePath.optional(),
  })
  .superRefine(exactlyOneOf('idToken', 'idTokenFile'));
