import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { exactlyOneOf, oauthCommon, UNEXPANDED } from './credential-fields.ts';
import { EnterpriseManagedSchema, WorkloadIdentitySchema } from './jwt-bearer-credentials.ts';

/** RFC 9110 field-name token: what an HTTP header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const TEAM_KEY = /^[a-z][a-z0-9-]{0,62}$/;

/** A static secret sent as one header on every request, e.g. `Authorization: Bearer ${TEAM_A_TOKEN}`. */
const HeaderCredentialSchema = z.strictObject({
  type: z.literal('header'),
  header: z.string().regex(HEADER_NAME, 'must be an HTTP header name').default('Authorization'),
  value: z.string().min(1),
});

/** OAuth 2.1 client credentials grant: the team is a confidential client of the authorization server. */
const ClientCredentialsSchema = z.strictObject({
  type: z.literal('client_credentials'),
  ...oauthCommon,
  clientSecret: z.string().min(1),
});

/** The signing algorithms of `private_key_jwt`, each with the key type it needs. */
const JWT_KEY_TYPES = { RS256: 'rsa', ES256: 'ec' } as const;

/**
 * OAuth 2.1 client credentials grant, the client authenticated by a JWT it signs (RFC 7523 §2.2,
 * `private_key_jwt`): the authorization server holds the public key, the private key never leaves the
 * worker. The key is a PKCS#8 PEM, normally from the environment (`${VAR}`; `\n` escapes are read as line
 * breaks, as a one-line secret often carries them). It is parsed here, so a key that is not one, or that
 * does not fit `algorithm`, stops the process naming the key.
 */
const PrivateKeyJwtSchema = z
  .strictObject({
    type: z.literal('private_key_jwt'),
    ...oauthCommon,
    privateKey: z
      .string()
      .min(1)
      .transform((pem) => pem.replaceAll('\\n', '\n').trim()),
    algorithm: z.enum(['RS256', 'ES256']).default('RS256'),
  })
  .superRefine((credential, context) => {
    if (UNEXPANDED.test(credential.privateKey)) return;
    let type: string | undefined;
    let curve: string | undefined;
    try {
      const key = createPrivateKey(credential.privateKey);
      type = key.asymmetricKeyType;
      curve = key.asymmetricKeyDetails?.namedCurve;
    } catch {
      context.addIssue({
        code: 'custom',
        path: ['privateKey'],
        message: 'not a PEM private key (-----BEGIN PRIVATE KEY----- …)',
      });
      return;
    }
    const wanted = JWT_KEY_TYPES[credential.algorithm];
    if (type !== wanted || (wanted === 'ec' && curve !== 'prime256v1')) {
      context.addIssue({
        code: 'custom',
        path: ['algorithm'],
        message: `${credential.algorithm} needs ${wanted === 'ec' ? 'an EC P-256' : 'an RSA'} key; privateKey is ${type}${curve ? ` (${curve})` : ''}`,
      });
    }
  });

/**
 * A refresh token an operator obtained for the team (once, interactively) and handed over through the
 * environment or a secret file. A rotated refresh token is kept in the fleet's token cache.
 */
const RefreshTokenSchema = z
  .strictObject({
    type: z.literal('refresh_token'),
    ...oauthCommon,
    clientSecret: z.string().min(1).optional(),
    refreshToken: z.string().min(1).optional(),
    /** A file holding the refresh token (a mounted secret); read when a token is needed. */
    refreshTokenFile: z.string().min(1).optional(),
  })
  .superRefine(exactlyOneOf('refreshToken', 'refreshTokenFile'));

export const CredentialSchema = z.discriminatedUnion('type', [
  HeaderCredentialSchema,
  ClientCredentialsSchema,
  PrivateKeyJwtSchema,
  RefreshTokenSchema,
  WorkloadIdentitySchema,
  EnterpriseManagedSchema,
]);

/**
 * `servers.<name>.auth` of an HTTP server: whose identity each request carries (docs/configuration.md).
 * A tools/call carries its team's credential (`teams.<team>`, else `default`); the session's own
 * requests (initialize, tools/list, pings, the event stream) carry `session`, never a team's.
 */
export const ServerAuthSchema = z.strictObject({
  session: CredentialSchema.optional(),
  default: CredentialSchema.optional(),
  teams: z
    .record(z.string().regex(TEAM_KEY, `team names must match ${TEAM_KEY.source}`), CredentialSchema)
    .default({}),
});

/** A stdio server's per-team secrets: environment variables of that team's own child process. */
const EnvCredentialSchema = z.strictObject({ env: z.record(z.string(), z.string()) });

/**
 * `servers.<name>.auth` of a stdio server: a team with secrets gets its own session (child process), opened
 * on its first call, closed after `idleCloseMs` without calls; at most `maxSessions` per worker (the least
 * recently used idle one is closed first). The shared session (no team secrets) serves the catalog.
 */
export const StdioAuthSchema = z.strictObject({
  default: EnvCredentialSchema.optional(),
  teams: z
    .record(z.string().regex(TEAM_KEY, `team names must match ${TEAM_KEY.source}`), EnvCredentialSchema)
    .default({}),
  maxSessions: z.int().min(1).max(256).default(8),
  idleCloseMs: z.int().min(1000).max(86_400_000).default(300_000),
});

export type Credential = z.output<typeof CredentialSchema>;
export type StdioAuth = z.output<typeof StdioAuthSchema>;
export type OAuthCredential = Exclude<Credential, { type: 'header' }>;
export type ServerAuth = z.output<typeof ServerAuthSchema>;
