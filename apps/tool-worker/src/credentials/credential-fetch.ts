import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';
import { extractWWWAuthenticateParams, withDpop } from '@modelcontextprotocol/client';
import { CredentialError } from './credential-error.ts';
import type { AuthHeader, CredentialSource } from './credential-source.ts';

/**
 * The credential of the tool call being sent. The processor runs the call inside it; the session's
 * transport (one warm session shared by all teams) reads it in `fetch`, so each request carries the
 * identity of the call it belongs to, and a request that belongs to no call carries the session's.
 */
export const callCredential = new AsyncLocalStorage<CredentialSource | undefined>();

/**
 * One request carrying `header`. A DPoP-bound token goes through the SDK's withDpop: `Authorization: DPoP
 * <token>` and a `DPoP` proof signed for this request alone (its method `htm`, its URL `htu`, the token's
 * hash `ath`, a fresh `jti`); a `use_dpop_nonce` challenge is answered once at once with the server's
 * nonce, and a nonce the server hands out on any answer goes into the next proof (RFC 9449 §7–9).
 */
function send(base: FetchLike, url: string | URL, init: RequestInit | undefined, header: AuthHeader) {
  if (header.dpop) {
    const token = header.value.slice(header.value.indexOf(' ') + 1);
    return withDpop(header.dpop, () => token)(base)(url, init);
  }
  const headers = new Headers(init?.headers);
  headers.set(header.name, header.value);
  return base(url, { ...init, headers });
}

/**
 * A fetch for an MCP transport that attaches the current identity's credential. A 401 means the server
 * refused the request before running anything, so it is renewed and resent exactly once; a second 401
 * is a CredentialError, which the call's outcome reports as `failed`, `executed: no` (no retry storm).
 */
export function credentialFetch(session: CredentialSource | undefined, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const source = callCredential.getStore() ?? session;
    if (!source) return base(url, init);
    const header = await source.current();
    const first = await send(base, url, init, header);
    if (first.status !== 401) return first;
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(first);
    await first.body?.cancel();
    const renewed = await source.renew(header, resourceMetadataUrl);
    if (!renewed) throw new CredentialError('rejected', source.server, source.team);
    const second = await send(base, url, init, renewed);
    if (second.status !== 401) return second;
    await second.body?.cancel();
    throw new CredentialError('rejected', source.server, source.team);
  };
}
