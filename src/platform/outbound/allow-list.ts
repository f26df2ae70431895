import { BlockList, isIP } from 'node:net';
import { bareHost, mappedV4 } from './addresses.js';

/**
 * The operator's exceptions to the outbound policy: host names, IP addresses and CIDR ranges that may
 * be private (loopback, RFC 1918, …) and may be reached over plain http://.
 *
 * A listed host name is trusted whatever it resolves to (the operator vouches for the name). A listed
 * address or range covers the addresses in it, whichever name resolved to them; an IPv4-mapped IPv6
 * address counts as the IPv4 address it connects to.
 */
export interface AllowList {
  readonly entries: readonly string[];
  /** Whether any address or range is listed (a name may then resolve into one). */
  readonly hasRanges: boolean;
  coversName(hostname: string): boolean;
  coversAddress(address: string): boolean;
}

/** The setting, and its deprecated aliases (still read, their entries join the one list). */
export const ALLOW_HOSTS_SETTING = 'CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS';
export const DEPRECATED_ALLOW_HOSTS_SETTINGS = ['CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS', 'CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS'] as const;

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$/;

/** Throws an Error naming the bad entry (a configuration mistake stops the start). */
export function createAllowList(entries: readonly string[], setting = ALLOW_HOSTS_SETTING): AllowList {
  const names = new Set<string>();
  const ranges = new BlockList();
  const kept: string[] = [];
  let hasRanges = false;
  for (const raw of entries) {
    const entry = bareHost(raw.trim());
    if (!entry) continue;
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const base = entry.slice(0, slash);
      const family = isIP(base);
      const bits = Number(entry.slice(slash + 1));
      if (!family || !/^\d{1,3}$/.test(entry.slice(slash + 1)) || bits > (family === 4 ? 32 : 128)) {
        throw new Error(`${setting}: "${raw.trim()}" is not a host name, an IP address or a CIDR range`);
      }
      ranges.addSubnet(base, bits, family === 4 ? 'ipv4' : 'ipv6');
      hasRanges = true;
    } else if (isIP(entry)) {
      ranges.addAddress(entry, isIP(entry) === 4 ? 'ipv4' : 'ipv6');
      hasRanges = true;
    } else if (HOST_NAME.test(entry)) {
      names.add(entry.replace(/\.$/, ''));
    } else {
      throw new Error(`${setting}: "${raw.trim()}" is not a host name, an IP address or a CIDR range`);
    }
    kept.push(entry);
  }
  const coversAddress = (address: string): boolean => {
    const bare = bareHost(address).split('%')[0]!;
    const family = isIP(bare);
    if (!family) return false;
    if (ranges.check(bare, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const v4 = mappedV4(bare);
    return v4 !== null && ranges.check(v4, 'ipv4');
  };
  return {
    entries: kept,
    hasRanges,
    coversName: (hostname) => {
      const host = bareHost(hostname).replace(/\.$/, '');
      return isIP(host) ? coversAddress(host) : names.has(host);
    },
    coversAddress,
  };
}

/** The allow-list entries of the environment: the setting and its deprecated aliases, merged. */
export function allowHostsFromEnv(env: Record<string, string | undefined>): string[] {
  const entries: string[] = [];
  for (const name of [ALLOW_HOSTS_SETTING, ...DEPRECATED_ALLOW_HOSTS_SETTINGS]) {
    const value = env[name];
    if (!value) continue;
    const list = value
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    // Validated here, with the name of the variable that holds the mistake.
    createAllowList(list, name);
    entries.push(...list);
  }
  return [...new Set(entries)];
}
