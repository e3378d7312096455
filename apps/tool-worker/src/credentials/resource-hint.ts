import type { FetchLike } from '@modelcontextprotocol/client';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client';

/** The probe is one small request; a server silent this long is not waited for. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Where an OAuth-protected MCP server says its RFC 9728 protected-resource metadata is. The MCP
 * authorization spec has a client learn it from the `resource_metadata` parameter of the server's 401
 * (`WWW-Authenticate`) before guessing any well-known URL: a server may publish it only there. Every
 * identity of a server shares one hint, so one probe per server, not one per team.
 */
export class ResourceHint {
  private found: Promise<URL | undefined> | undefined;

  constructor(
    private readonly serverUrl: string,
    private readonly transport: 'http' | 'sse',
    private readonly fetchFn: FetchLike = fetch,
  ) {}

  /** The URL the server's 401 named, probing once for it; undefined when the server names none. */
  get(): Promise<URL | undefined> {
    if (!this.found) {
      const probing = this.probe();
      // A probe that could not reach the server is tried again next time, not remembered.
      probing.catch(() => {
        if (this.found === probing) this.found = undefined;
      });
      this.found = probing;
    }
    return this.found;
  }

  /** A 401 of a real request named it (it may have moved since the probe). */
  set(url: URL): void {
    this.found = Promise.resolve(url);
  }

  /** Forget it: the next discovery probes again (after discovery failed, the server may have changed). */
  reset(): void {
    this.found = undefined;
  }

  /**
   * An unauthenticated request that runs nothing: a JSON-RPC `ping` POSTed to a Streamable HTTP server
   * (a GET of the event stream for a legacy SSE one). A protected server answers it 401; only that
   * answer's `WWW-Authenticate` is read.
   */
  private async probe(): Promise<URL | undefined> {
    const init: RequestInit =
      this.transport === 'sse'
        ? { method: 'GET', headers: { accept: 'text/event-stream' } }
        : {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 'switchyard-auth-probe', method: 'ping' }),
          };
    const response = await this.fetchFn(this.serverUrl, {
      ...init,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).catch((error: unknown) => {
      throw new Error(`${this.serverUrl} could not be reached: ${(error as Error).message}`);
    });
    const hint =
      response.status === 401 ? extractWWWAuthenticateParams(response).resourceMetadataUrl : undefined;
    await response.body?.cancel().catch(() => undefined);
    return hint;
  }
}
