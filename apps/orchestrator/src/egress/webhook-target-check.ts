import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressRefusal, type Cidr } from './address-policy.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a name resolves to; injectable so that tests need no real DNS. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** getaddrinfo, as a connection would resolve the name (hosts file included), every answer. */
export const systemResolve: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, order: 'verbatim' })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

export interface EgressPolicy {
  /** `orchestrator.webhooks.allowPrivateNetworks`: internal networks an operator lets webhooks reach. */
  allow: readonly Cidr[];
  resolve: ResolveHost;
}

export type TargetCheck =
  | { ok: true; host: string; addresses: ResolvedAddress[] }
  /** `final`: asking again cannot change the answer (a literal address or a refused name). */
  | { ok: false; reason: string; final: boolean };

/** `localhost` and its subdomains are loopback by definition (RFC 6761), whatever DNS says. */
const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Names of instance metadata services (GCP, AWS); their addresses are refused by address-policy.ts. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** The URL's host as DNS and net take it: IPv6 without brackets, no trailing dot, lower case. */
export function hostOf(url: URL): string {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return host.replace(/\.+$/, '');
}

/**
 * Why `url` is refused without resolving anything (its host is an internal address literal, in any
 * notation WHATWG URL parsing normalises, or a loopback or metadata name), or undefined. What POST
 * /v1/jobs can tell the submitter at once; a name is judged again at each delivery.
 */
export function literalRefusal(url: string, allow: readonly Cidr[]): string | undefined {
  const host = hostOf(new URL(url));
  if (isLoopbackName(host)) return `${host} is a loopback name`;
  if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata name`;
  if (!isIP(host)) return undefined;
  const refusal = addressRefusal(host, allow);
  return refusal ? `${host} is ${refusal}` : undefined;
}

/**
 * Whether a webhook may be sent to `url`: its host resolved and **every** address checked (one internal
 * answer refuses the name, since the connection could use any). The checked addresses are what the
 * sender connects to, so a second DNS answer cannot differ from the one checked.
 */
export async function checkWebhookTarget(url: string, policy: EgressPolicy): Promise<TargetCheck> {
  const host = hostOf(new URL(url));
  const literal = literalRefusal(url, policy.allow);
  if (literal) return { ok: false, reason: `refused: ${literal}`, final: true };
  const family = isIP(host);
  if (family === 4 || family === 6) return { ok: true, host, addresses: [{ address: host, family }] };
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    return { ok: false, reason: `cannot resolve ${host}: ${failure.code ?? failure.message}`, final: false };
  }
  if (addresses.length === 0)
    return { ok: false, reason: `cannot resolve ${host}: no address`, final: false };
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy.allow);
    // Not final: the name may resolve elsewhere later (the next attempt resolves it again).
    if (refusal)
      return { ok: false, reason: `refused: ${host} resolves to ${address} (${refusal})`, final: false };
  }
  return { ok: true, host, addresses };
}
