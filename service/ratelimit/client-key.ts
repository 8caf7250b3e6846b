import ipaddr from 'ipaddr.js';

/** The id of a client whose address is unknown (socket already gone): they share one bucket. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * Longest address text considered at all. The longest valid form with a port,
 * `[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535`, is 54 characters; the rest is room for
 * a zone index. Anything longer is refused before it is parsed.
 */
export const MAX_ADDRESS_LENGTH = 100;

/** One octet of a dotted quad in canonical form (0-255, no leading zeros). */
const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
/** A canonical dotted quad, captured. */
const DOTTED_QUAD = String.raw`((?:${OCTET}\.){3}${OCTET})`;

/** Dotted-quad IPv4 in canonical form, optionally with `:port`. */
const IPV4_WITH_PORT = new RegExp(String.raw`^${DOTTED_QUAD}(?::\d{1,5})?$`);

/**
 * `::ffff:` and a canonical dotted quad: the IPv4-mapped form a dual-stack socket reports for an
 * IPv4 client (the service listens on `::`, so this is every IPv4 client without a proxy). Read
 * here directly; ipaddr.js would give the same answer at ~30 times the cost (2.3 µs per request).
 */
const IPV4_MAPPED = new RegExp(String.raw`^::ffff:${DOTTED_QUAD}$`, 'i');

/**
 * IPv6 ids already worked out, per prefix length: a client sends many requests from one address,
 * and parsing one costs ~2.7 µs. Bounded: emptied when it reaches `IPV6_CACHE_SIZE` entries, so a
 * flood of fresh addresses costs what it did without the cache and never more memory.
 */
const ipv6Ids = new Map<number, Map<string, string | undefined>>();
const IPV6_CACHE_SIZE = 10_000;

/** `[v6]` or `[v6]:port`, the bracketed form a proxy writes when it appends the port. */
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * The rate-limit id of one address text, or undefined when it is not an IP address.
 *
 * - A port is dropped (`198.51.100.7:5678`, `[2001:db8::1]:443`): the client is the host.
 * - IPv4 is keyed by its dotted-quad form; other spellings (`0x7f.1`, `010.0.0.1`, which
 *   parsers read differently) are not addresses here.
 * - An IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what a dual-stack socket reports) is
 *   keyed by its IPv4 form, so one client has one key on either stack.
 * - IPv6 is keyed by its network prefix in canonical form (`2001:db8:1:2::/64` for the default
 *   64): one subscriber usually owns a whole /64, and rotating addresses inside it must not
 *   escape the limit. A zone index is dropped.
 */
export function normalizeAddress(text: string, ipv6PrefixLength: number): string | undefined {
  if (text.length === 0 || text.length > MAX_ADDRESS_LENGTH) return undefined;
  const v4 = IPV4_WITH_PORT.exec(text);
  if (v4) return v4[1];
  const mapped = IPV4_MAPPED.exec(text);
  if (mapped) return mapped[1];
  let cache = ipv6Ids.get(ipv6PrefixLength);
  if (cache === undefined) {
    cache = new Map();
    ipv6Ids.set(ipv6PrefixLength, cache);
  }
  let id = cache.get(text);
  if (id === undefined && !cache.has(text)) {
    id = parseIpv6(text, ipv6PrefixLength);
    if (cache.size >= IPV6_CACHE_SIZE) cache.clear();
    cache.set(text, id);
  }
  return id;
}

/**
 * The IPv6 part of `normalizeAddress`, uncached: anything that is not a dotted quad, parsed by
 * ipaddr.js (the reference the fast paths are tested against).
 */
export function parseIpv6(text: string, ipv6PrefixLength: number): string | undefined {
  const bracketed = BRACKETED.exec(text);
  const v6 = bracketed ? bracketed[1] : text;
  if (!ipaddr.IPv6.isValid(v6)) return undefined;
  const addr = ipaddr.IPv6.parse(v6);
  if (addr.isIPv4MappedAddress()) return addr.toIPv4Address().toString();
  const bytes = addr.toByteArray();
  for (let bit = ipv6PrefixLength; bit < 128; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixLength}`;
}

/**
 * The rate-limit identity of a request: `ip` is the client address as resolved through
 * `trust proxy` (`req.ip`), which with trusted proxies is whatever the forwarded header said;
 * `socket` is the peer's address. A forwarded value that is not an IP address (garbage, a
 * hostname, kilobytes of anything) is not trusted as an identity: the socket address is used
 * instead, so no client-chosen text ever becomes a key. See `normalizeAddress` for the forms.
 */
export function clientId(ip: string | undefined, ipv6PrefixLength: number, socket?: string): string {
  if (ip) {
    const id = normalizeAddress(ip, ipv6PrefixLength);
    if (id !== undefined) return id;
  }
  if (socket && socket !== ip) {
    const id = normalizeAddress(socket, ipv6PrefixLength);
    if (id !== undefined) return id;
  }
  return UNKNOWN_CLIENT;
}

/**
 * The rate-limit id of a request, from what the middleware reads: with no proxy trusted
 * (`socketOnly`, `TRUST_PROXY=0`) the socket address, else `req.ip` as resolved through `trust
 * proxy`, falling back to the socket address. The one function both the limiter and
 * `/api/rate-limit`'s `client_ip` use, so the status shows the key the limiter charges.
 */
export function requestClientId(
  ip: string | undefined,
  peer: string | undefined,
  socketOnly: boolean,
  ipv6PrefixLength: number,
): string {
  return clientId(socketOnly ? peer : ip, ipv6PrefixLength, peer);
}
