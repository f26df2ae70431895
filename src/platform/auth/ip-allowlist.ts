import { BlockList, isIP } from 'node:net';

/** Parses allowed_ips entries (IPv4/IPv6 addresses and CIDR ranges); null names the bad entry. */
export function parseAllowList(entries: string[]): { list: BlockList; invalid: string | null } {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits, extra] = entry.trim().split('/');
    const family = address ? isIP(address) : 0;
    if (!address || family === 0 || extra !== undefined) return { list, invalid: entry };
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const prefix = Number(bits);
    if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) return { list, invalid: entry };
    list.addSubnet(address, prefix, type);
  }
  return { list, invalid: null };
}

/** True when the address is inside the list (IPv4-mapped IPv6 addresses are matched as IPv4). */
export function addressAllowed(entries: string[], address: string): boolean {
  if (entries.length === 0) return true;
  const { list } = parseAllowList(entries);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const candidate = mapped ?? address;
  const family = isIP(candidate);
  if (family === 0) return false;
  return list.check(candidate, family === 4 ? 'ipv4' : 'ipv6');
}
