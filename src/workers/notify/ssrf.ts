import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard of outbound webhooks. Integration URLs are chosen by customers; without a guard a
 * URL could make the workers call the metadata service of the cloud they run in, Redis, or
 * anything else on the private network.
 *
 * The check is made on the address the socket actually connects to: a custom `lookup` for
 * http.request resolves the name, refuses the whole answer when any address is blocked, and hands
 * Node exactly the checked addresses. Checking the hostname string beforehand would not do: a name
 * can resolve to a public address for the check and to 127.0.0.1 for the connection (DNS
 * rebinding). Node skips `lookup` for IP literals, so those are checked by `assertPublicHost`.
 * Both run on every delivery attempt (http-post.ts), so a name that moved to a refused address
 * since the integration was saved is refused too.
 *
 * What may be reached is an allow-list: global unicast only, as ipaddr.js (maintained, used by
 * Express's proxy-addr) classifies the IANA special-purpose registries, so loopback, private,
 * link-local, CGNAT, documentation (192.0.2.0/24, 2001:db8::/32, …), 6to4 relay, discard-only
 * (100::/64), NAT64, Teredo, IPv4-mapped and every range the registry adds are refused without a
 * list of ours to keep up. On top, the host's own interface addresses: a public address of this
 * machine reaches its listeners (the API, Redis bound to all interfaces) like loopback does.
 */

/** Raised when a webhook would reach a blocked address: a permanent failure, never retried. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'ERR_BLOCKED_ADDRESS';
}

/** True unless `address` is a global unicast address of another host. */
export function isBlockedAddress(address: string): boolean {
  // isIP first: ipaddr.js also reads legacy IPv4 spellings (0x7f.1), which no lookup answers.
  if (isIP(address) === 0) return true; // not an address at all: refuse rather than guess
  const parsed = ipaddr.parse(address);
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) reaches IPv4 hosts: its range is `ipv4Mapped`, refused.
  if (parsed.range() !== 'unicast') return true;
  // IPv4-compatible IPv6 (::a.b.c.d, ::/96, deprecated) embeds an IPv4 address too; ipaddr.js
  // calls only :: itself `unspecified`.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return true;
  return ownAddresses().has(parsed.toNormalizedString());
}

/**
 * The addresses of this host's interfaces, normalized as ipaddr.js prints them. Read on each
 * check (a few microseconds): interfaces come and go, and a delivery is no hot path.
 */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      const bare = entry.address.replace(/%.*$/, ''); // an IPv6 zone (fe80::1%eth0)
      if (ipaddr.isValid(bare)) own.add(ipaddr.parse(bare).toNormalizedString());
    }
  }
  return own;
}

const refusal = (host: string, address: string) =>
  new BlockedAddressError(
    `refused: ${host} resolves to ${address}, which is not a global unicast address of another host (loopback, private, link-local, reserved or this host's own; set ALLOW_PRIVATE_WEBHOOKS=true to allow)`,
  );

/** Throws for a URL host that is itself a blocked IP literal (Node does not call `lookup` for those). */
export function assertPublicHost(hostname: string): void {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0 && isBlockedAddress(bare)) throw refusal(hostname, bare);
}

/** A `lookup` for http.request that resolves as usual and refuses blocked addresses. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const blocked = addresses.find((entry) => isBlockedAddress(entry.address));
    if (blocked) return callback(refusal(hostname, blocked.address), '', 0);
    if (addresses.length === 0) return callback(new Error(`${hostname}: no address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};
