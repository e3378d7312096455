import type { Credential, ServerConfig, Store } from '@switchyard/contracts';
import { CredentialError } from './credential-error.ts';
import { type CredentialSource, credentialSource } from './credential-source.ts';
import { ResourceHint } from './resource-hint.ts';
import { TokenCache } from './token-cache.ts';

/**
 * Every served server's credentials (servers.<name>.auth): which identity a request carries. Sources
 * are kept per (server, identity) so concurrent calls share one token request.
 */
export class TeamCredentials {
  private readonly cache: TokenCache;
  private readonly sources = new Map<string, CredentialSource>();
  /** Per server: where its 401 says its resource metadata is, shared by every identity. */
  private readonly hints = new Map<string, ResourceHint>();

  constructor(
    private readonly servers: Record<string, ServerConfig>,
    /** Where the fleet shares its OAuth tokens (token-cache.ts). */
    store: Store,
  ) {
    this.cache = new TokenCache(store);
  }

  /** Whether calls to `server` carry a team's credential at all. */
  protects(server: string): boolean {
    return this.authOf(server) !== undefined;
  }

  /**
   * The credential a call of `team` carries to `server`: its own entry, else the server's default.
   * Undefined for a server without `auth`; a CredentialError ('missing') when the team has none.
   */
  forCall(server: string, team: string | undefined): CredentialSource | undefined {
    const auth = this.authOf(server);
    if (!auth) return undefined;
    const own = team === undefined ? undefined : auth.teams[team];
    const credential = own ?? auth.default;
    if (!credential) throw new CredentialError('missing', server, team);
    // A team on the default shares the default's tokens but still under its own cache key: keyed by
    // identity, so revoking or renewing one team's token never touches another's.
    return this.source(server, team, credential);
  }

  /** The worker's own credential for the session's requests that belong to no call; undefined: none. */
  forSession(server: string): CredentialSource | undefined {
    const credential = this.authOf(server)?.session;
    return credential ? this.source(server, undefined, credential) : undefined;
  }

  private authOf(server: string) {
    const config = this.servers[server];
    return config && config.transport !== 'stdio' ? config.auth : undefined;
  }

  private source(server: string, team: string | undefined, credential: Credential): CredentialSource {
    const id = `${server}\0${team ?? ''}`;
    let source = this.sources.get(id);
    if (!source) {
      const config = this.servers[server] as Extract<ServerConfig, { url: string }>;
      let hint = this.hints.get(server);
      if (!hint) {
        hint = new ResourceHint(config.url, config.transport);
        this.hints.set(server, hint);
      }
      source = credentialSource(team, server, config.url, credential, this.cache, hint);
      this.sources.set(id, source);
    }
    return source;
  }
}
