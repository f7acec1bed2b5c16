import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

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
 */

/** Loopback, private, link-local, shared, multicast, reserved and unspecified ranges. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback, and IPv4-compatible (::a.b.c.d, deprecated)
  ['64:ff9b::', 96], // NAT64 (RFC 6052): reaches the embedded IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** Raised when a webhook would reach a blocked address: a permanent failure, never retried. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'ERR_BLOCKED_ADDRESS';
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  // IPv4-mapped IPv6 (::ffff:a.b.c.d, in any spelling) reaches IPv4 hosts, blocked ones included;
  // public services have no need of it. (A BlockList rule for ::ffff:0:0/96 would also match
  // every plain IPv4 address, which BlockList compares in mapped form.)
  if (family === 6 && /^::ffff:/i.test(new URL(`http://[${address}]`).hostname.slice(1, -1))) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const refusal = (host: string, address: string) =>
  new BlockedAddressError(
    `refused: ${host} resolves to ${address}, a loopback, private or link-local address (set ALLOW_PRIVATE_WEBHOOKS=true to allow)`,
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
