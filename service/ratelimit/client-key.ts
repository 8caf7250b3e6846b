import ipaddr from 'ipaddr.js';

/** The id of a client whose address is unknown (socket already gone): they share one bucket. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The rate-limit identity of a client address (`req.ip`, already resolved through `trust proxy`).
 *
 * - IPv4 is keyed by the address; an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what a
 *   dual-stack socket reports) by its IPv4 form, so one client has one key on either stack.
 * - IPv6 is keyed by its network prefix (`2001:db8:1:2::/64` for the default 64): one subscriber
 *   usually owns a whole /64, and rotating addresses inside it must not escape the limit.
 */
export function clientId(ip: string | undefined, ipv6PrefixLength: number): string {
  if (!ip) return UNKNOWN_CLIENT;
  // Fast path: plain IPv4, by far the most common.
  if (!ip.includes(':')) return ip;
  if (ip.length > 7 && ip.includes('.') && ip.slice(0, 7).toLowerCase() === '::ffff:') return ip.slice(7);
  let addr: ipaddr.IPv6;
  try {
    addr = ipaddr.IPv6.parse(ip);
  } catch {
    return ip;
  }
  if (addr.isIPv4MappedAddress()) return addr.toIPv4Address().toString();
  const bytes = addr.toByteArray();
  for (let bit = ipv6PrefixLength; bit < 128; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixLength}`;
}
