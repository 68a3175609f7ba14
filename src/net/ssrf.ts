import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound webhooks must not reach the operator's own network (SSRF): loopback, private,
 * link-local and other non-public ranges are refused unless WEBHOOK_ALLOW_PRIVATE is set.
 * The check runs when a campaign is saved and again on the address actually connected to.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.range() === 'unicast';
  return v6.range() === 'unicast';
}

/**
 * The IPv4 address that an IPv6 spelling stands for, when it stands for one: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated but still routed to the IPv4
 * address by some stacks, so `[::7f00:1]` is 127.0.0.1), NAT64 (64:ff9b::/96, RFC 6052) and
 * 6to4 (2002:AABB:CCDD::/16, RFC 3056). Such an address is judged by its IPv4 address: a
 * NAT64 gateway on an IPv6-only host reaches public receivers this way, and must not reach
 * 10.0.0.1 this way. Other translated forms (Teredo, ::ffff:0:0:0/96) stay non-unicast
 * and are refused.
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return fromWords(p[6]!, p[7]!);
  // ::/96, except :: and ::1, which are IPv6's own unspecified and loopback addresses.
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return fromWords(p[6]!, p[7]!);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return fromWords(p[6]!, p[7]!);
  if (p[0] === 0x2002) return fromWords(p[1]!, p[2]!);
  return undefined;
}

export class UnsafeUrlError extends Error {}

/** Checks a webhook URL at save time: http(s), and a host that is (or resolves to) public addresses only. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`'${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeUrlError('webhook URLs must be http or https');
  if (url.username || url.password) throw new UnsafeUrlError('webhook URLs must not carry credentials');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveAll(host).catch(() => [] as string[]);
  // A host that does not resolve now is accepted: the delivery-time check still guards it.
  const blocked = addresses.find((a) => !isPublicAddress(a));
  if (blocked !== undefined) throw new UnsafeUrlError(`webhook host ${host} is a private or loopback address (${blocked})`);
  return url;
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addresses: LookupAddress[]) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))),
  );
}

/**
 * A `lookup` for http(s).request that refuses non-public addresses: the address checked is
 * the address connected to, so a DNS answer that changes after the save cannot get around it.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, []);
      const usable = allowPrivate ? addresses : addresses.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) {
        const refused = new Error(`refused to connect to ${hostname}: private or loopback address`) as NodeJS.ErrnoException;
        refused.code = 'EUNSAFEADDRESS';
        return callback(refused, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
