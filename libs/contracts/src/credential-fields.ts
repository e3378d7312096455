import { isAbsolute } from 'node:path';
import { z } from 'zod';

/** A `${VAR}` left unexpanded: a process that never reads the secret (the orchestrator) does not check it. */
export const UNEXPANDED = /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/;

/**
 * The keys every OAuth credential has. Without `issuer` the authorization server is discovered from the
 * MCP server (its WWW-Authenticate header or RFC 9728 protected-resource metadata); with it, a server
 * that advertises another one is refused, so a client secret is only ever shown to the issuer named here.
 * `dpop`: tokens bound to a key pair the worker keeps in memory (RFC 9449), presented with a fresh proof
 * on every request, instead of bearer tokens anyone holding them could use.
 */
export const oauthCommon = {
  clientId: z.string().min(1),
  scope: z.string().min(1).optional(),
  issuer: z.url({ protocol: /^https?$/ }).optional(),
  dpop: z.boolean().optional(),
};

/**
 * A file the worker reads a secret from when it needs it (a mounted secret, a projected token). Absolute:
 * a relative path would depend on where the worker happened to be started.
 */
export const secretFilePath = z
  .string()
  .min(1)
  .refine((path) => UNEXPANDED.test(path) || isAbsolute(path), 'must be an absolute path');

/** Three base64url parts: what a JWT looks like. Checked only once expanded. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** A JWT given literally (`${VAR}`): a value that cannot be one stops the process naming the key. */
export const jwtValue = z
  .string()
  .min(1)
  .transform((jwt) => jwt.trim())
  .refine((jwt) => UNEXPANDED.test(jwt) || JWT_SHAPE.test(jwt), 'not a JWT (three base64url parts)');

/**
 * Exactly one of two keys that give the same secret (the value, or a file holding it): an issue on the
 * second key, so the error names where the choice is made.
 */
export function exactlyOneOf<T extends Record<string, unknown>>(
  value: keyof T & string,
  file: keyof T & string,
) {
  return (credential: T, context: z.RefinementCtx) => {
    if ((credential[value] === undefined) === (credential[file] === undefined)) {
      context.addIssue({
        code: 'custom',
        path: [file],
        message: `give exactly one of ${value} and ${file}`,
      });
    }
  };
}
