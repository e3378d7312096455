import { readFile } from 'node:fs/promises';
import type { Credential, OAuthCredential } from '@switchyard/contracts';
import { CredentialError } from './credential-error.ts';
import {
  type AuthorizationServer,
  discoverAuthorizationServer,
  OAuthProblem,
  requestToken,
} from './oauth-flows.ts';
import type { ResourceHint } from './resource-hint.ts';
import type { TokenCache, TokenKey } from './token-cache.ts';

/** One header carrying a credential. Its value is a secret: never logged, never put in an outcome. */
export interface AuthHeader {
  name: string;
  value: string;
}

/** One identity's credential for one server: the header to send now, and a renewal after a 401. */
export interface CredentialSource {
  readonly server: string;
  /** The calling team, or undefined for the worker's own session credential. */
  readonly team: string | undefined;
  current(): Promise<AuthHeader>;
  /**
   * The server answered 401 to `rejected`: a fresh header, or undefined when there is nothing fresher
   * to try (a static secret). `resourceMetadataUrl` is what the 401's WWW-Authenticate pointed at.
   */
  renew(rejected: AuthHeader, resourceMetadataUrl: URL | undefined): Promise<AuthHeader | undefined>;
}

/** A static secret from the environment: nothing to renew. */
export class StaticCredentialSource implements CredentialSource {
  constructor(
    readonly team: string | undefined,
    readonly server: string,
    private readonly header: AuthHeader,
  ) {}

  async current(): Promise<AuthHeader> {
    return this.header;
  }

  async renew(): Promise<undefined> {
    return undefined;
  }
}

/** The cache key's team part of the worker's own session credential (team names cannot start with "_"). */
const SESSION_IDENTITY = '_session';

/**
 * After a token could not be had, this identity's calls fail at once with the same error for this long,
 * doubling per failure up to the maximum: a broken token endpoint or discovery is asked again at that
 * pace per worker, not once per call or per session reconnect.
 */
const FIRST_PAUSE_MS = 5_000;
const MAX_PAUSE_MS = 300_000;

/**
 * OAuth tokens of one identity for one server, shared by the fleet through the token cache. Concurrent
 * calls of this worker wait for one token request instead of each making their own.
 */
export class OAuthCredentialSource implements CredentialSource {
  private authorizationServer: Promise<AuthorizationServer> | undefined;
  /** The protected-resource metadata URL the current discovery used. */
  private resourceMetadataUrl: URL | undefined;
  private inFlight: Promise<AuthHeader> | undefined;
  /** The last failure to get a token, repeated without asking anyone until `retryAt`. */
  private failure: { error: CredentialError; retryAt: number; pauseMs: number } | undefined;

  constructor(
    readonly team: string | undefined,
    readonly server: string,
    private readonly serverUrl: string,
    private readonly credential: OAuthCredential,
    private readonly cache: TokenCache,
    private readonly hint: ResourceHint,
  ) {}

  async current(): Promise<AuthHeader> {
    if (this.failure && Date.now() < this.failure.retryAt) throw this.failure.error;
    try {
      const key = await this.key();
      const cached = await this.cache.get(key);
      const header =
        cached && cached.renewAt > Date.now()
          ? bearer(cached.tokenType, cached.accessToken)
          : await this.obtain(key);
      this.failure = undefined;
      return header;
    } catch (error) {
      if (error instanceof CredentialError) this.pause(error);
      throw error;
    }
  }

  async renew(rejected: AuthHeader, resourceMetadataUrl: URL | undefined): Promise<AuthHeader> {
    if (resourceMetadataUrl && resourceMetadataUrl.href !== this.resourceMetadataUrl?.href) {
      // The server points at (new) metadata: discover again, the authorization server may have moved.
      this.hint.set(resourceMetadataUrl);
      this.authorizationServer = undefined;
    }
    const key = await this.key();
    await this.cache.reject(key, tokenOf(rejected));
    return this.current();
  }

  private pause(error: CredentialError): void {
    // Concurrent calls that waited for the same attempt all get its error: one failure, one pause.
    if (this.failure?.error === error) return;
    const pauseMs = Math.min(MAX_PAUSE_MS, this.failure ? this.failure.pauseMs * 2 : FIRST_PAUSE_MS);
    this.failure = { error, retryAt: Date.now() + pauseMs, pauseMs };
    if (error.problem === 'unavailable') {
      // The next try discovers afresh: the server or its authorization server may have been fixed.
      this.authorizationServer = undefined;
      this.hint.reset();
    }
  }

  private async key(): Promise<TokenKey> {
    const { issuer } = await this.discover();
    return { team: this.team ?? SESSION_IDENTITY, issuer, server: this.server };
  }

  private discover(): Promise<AuthorizationServer> {
    if (!this.authorizationServer) {
      const found: Promise<AuthorizationServer> = (async () => {
        // What the server's own 401 names comes first (MCP authorization spec); well-known URLs after.
        this.resourceMetadataUrl = await this.hint.get().catch((error: unknown) => {
          throw new OAuthProblem('unavailable', (error as Error).message);
        });
        return discoverAuthorizationServer(this.serverUrl, this.credential.issuer, this.resourceMetadataUrl);
      })().catch((error: unknown) => {
        // A failed discovery is tried again on the next call, not remembered.
        if (this.authorizationServer === found) this.authorizationServer = undefined;
        throw this.unobtainable(error);
      });
      this.authorizationServer = found;
    }
    return this.authorizationServer;
  }

  private obtain(key: TokenKey): Promise<AuthHeader> {
    this.inFlight ??= (async () => {
      try {
        const server = await this.discover();
        const cached = await this.cache.renewOnce(key, async (cachedRefreshToken) => {
          const refreshToken = cachedRefreshToken ?? (await this.configuredRefreshToken());
          const tokens = await requestToken(this.credential, server, refreshToken).catch((error: unknown) => {
            throw this.unobtainable(error);
          });
          return this.cache.put(key, {
            accessToken: tokens.access_token,
            tokenType: tokens.token_type,
            ...(tokens.expires_in !== undefined ? { expiresInSeconds: tokens.expires_in } : {}),
            ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
          });
        });
        return bearer(cached.tokenType, cached.accessToken);
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  private async configuredRefreshToken(): Promise<string | undefined> {
    if (this.credential.type !== 'refresh_token') return undefined;
    if (this.credential.refreshToken) return this.credential.refreshToken;
    if (!this.credential.refreshTokenFile) return undefined;
    try {
      return (await readFile(this.credential.refreshTokenFile, 'utf8')).trim();
    } catch (error) {
      throw this.unobtainable(
        new Error(`cannot read refreshTokenFile: ${(error as NodeJS.ErrnoException).code}`),
      );
    }
  }

  private unobtainable(error: unknown): CredentialError {
    if (error instanceof CredentialError) return error;
    const problem =
      error instanceof OAuthProblem && error.kind === 'unavailable' ? 'unavailable' : 'unobtainable';
    return new CredentialError(problem, this.server, this.team, (error as Error).message);
  }
}

function bearer(tokenType: string, accessToken: string): AuthHeader {
  return { name: 'Authorization', value: `${tokenType} ${accessToken}` };
}

function tokenOf(header: AuthHeader): string {
  return header.value.slice(header.value.indexOf(' ') + 1);
}

export function credentialSource(
  team: string | undefined,
  server: string,
  serverUrl: string,
  credential: Credential,
  cache: TokenCache,
  hint: ResourceHint,
): CredentialSource {
  if (credential.type === 'header') {
    return new StaticCredentialSource(team, server, { name: credential.header, value: credential.value });
  }
  return new OAuthCredentialSource(team, server, serverUrl, credential, cache, hint);
}
