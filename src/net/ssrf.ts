import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound webhooks must not reach the operator's own network (SSRF): loopback, private,
 * link-local and other non-public ranges are refused unless WEBHOOK_ALLOW_PRIVATE is set.
 * The check runs when a campaign is saved and again on the address actually connected to.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
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
  return (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
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
