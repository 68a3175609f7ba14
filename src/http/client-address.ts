import ipaddr from 'ipaddr.js';

/**
 * What a per-client throttle counts by, from the socket's peer address (decisions.md,
 * Hardening): an IPv4 address as is, also when it arrives IPv4-mapped; an IPv6 address by its
 * /64, the block one subscriber usually gets, whose addresses would otherwise each come with
 * a fresh allowance.
 */
export function throttleAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
