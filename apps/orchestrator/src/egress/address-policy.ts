import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
/** A parsed CIDR of `orchestrator.webhooks.allowPrivateNetworks`. */
export type Cidr = [Address, number];

/**
 * Instance metadata services (AWS, GCP, Azure, Oracle: 169.254.169.254; AWS ECS: 169.254.170.2; AWS over
 * IPv6: fd00:ec2::254; Alibaba: 100.100.100.200). They hand out the cloud credentials of the host, so they
 * stay refused even inside an allowed network.
 */
const METADATA_ADDRESSES = ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200'].map(
  (text) => ipaddr.parse(text).toNormalizedString(),
);

/**
 * Special-purpose ranges that ipaddr.js's range() does not name (or names only as `reserved`), checked
 * before it. Whatever it names other than `unicast` is refused too.
 */
const EXTRA_RANGES: Array<[Cidr, string]> = (
  [
    ['192.0.2.0/24', 'documentation'],
    ['198.51.100.0/24', 'documentation'],
    ['203.0.113.0/24', 'documentation'],
    ['198.18.0.0/15', 'benchmarking'],
    ['2001:db8::/32', 'documentation'],
    ['3fff::/20', 'documentation'],
    ['2001::/32', 'teredo'],
    ['2001::/23', 'reserved'],
  ] as const
).map(([cidr, name]) => [ipaddr.parseCIDR(cidr), name]);

/** The only IPv6 space handed out as global unicast; anything outside it is not a public receiver. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** How ipaddr.js's range names read in a refusal. */
const RANGE_LABELS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  '6to4': '6to4',
  teredo: 'teredo',
};

/** `orchestrator.webhooks.allowPrivateNetworks` parsed (the config schema already checked each is a CIDR). */
export function parseAllowList(cidrs: readonly string[]): Cidr[] {
  return cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
}

/**
 * Why a webhook may not be sent to `text` (an IP address as DNS answers it or a URL holds it), or
 * undefined when it may: a public address, or an internal one inside `allow`. IPv4 carried in IPv6
 * (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64 64:ff9b::/96) is judged as the IPv4 it carries.
 */
export function addressRefusal(text: string, allow: readonly Cidr[]): string | undefined {
  if (!ipaddr.isValid(text)) return 'not an IP address';
  const parsed = ipaddr.parse(text);
  const carried = carriedIpv4(parsed);
  const judged = carried?.address ?? parsed;
  const range = rangeOf(judged);
  if (!range) return undefined;
  const allowed =
    range !== 'cloud metadata' && allow.some((cidr) => inCidr(judged, cidr) || inCidr(parsed, cidr));
  if (allowed) return undefined;
  return carried ? `${range}, ${carried.how} ${judged.toString()}` : range;
}

/** The special range `address` is in, or undefined for a public unicast address. */
function rangeOf(address: Address): string | undefined {
  if (METADATA_ADDRESSES.includes(address.toNormalizedString())) return 'cloud metadata';
  const extra = EXTRA_RANGES.find(([cidr]) => inCidr(address, cidr));
  if (extra) return extra[1];
  const range = address.range();
  if (range !== 'unicast') return RANGE_LABELS[range] ?? range;
  if (address.kind() === 'ipv6' && !inCidr(address, GLOBAL_UNICAST_V6)) return 'reserved';
  return undefined;
}

function carriedIpv4(address: Address): { address: ipaddr.IPv4; how: string } | undefined {
  if (address.kind() !== 'ipv6') return undefined;
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  const how =
    range === 'ipv4Mapped'
      ? 'IPv4-mapped'
      : range === 'rfc6145'
        ? 'IPv4-translated'
        : range === 'rfc6052'
          ? 'NAT64'
          : // ::/96 but not :: or ::1 (which are unspecified and loopback themselves)
            range === 'unicast' && inCidr(v6, IPV4_COMPATIBLE)
            ? 'IPv4-compatible'
            : undefined;
  if (!how) return undefined;
  const [high = 0, low = 0] = v6.parts.slice(6);
  return { address: new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]), how };
}

function inCidr(address: Address, cidr: Cidr): boolean {
  if (address.kind() !== cidr[0].kind()) return false;
  return address.kind() === 'ipv4'
    ? (address as ipaddr.IPv4).match(cidr as [ipaddr.IPv4, number])
    : (address as ipaddr.IPv6).match(cidr as [ipaddr.IPv6, number]);
}
