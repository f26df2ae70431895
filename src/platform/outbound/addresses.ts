import { isIP } from 'node:net';

/**
 * Address classification of the outbound guard: which IP addresses a request on a tenant's behalf may
 * not reach. Loopback, unspecified, private, carrier-grade NAT, link-local, multicast, reserved,
 * benchmarking and documentation ranges are refused, IPv4 and IPv6 alike, and also when an IPv6
 * address embeds an IPv4 one: IPv4-mapped (::ffff:a.b.c.d, which the kernel connects to the IPv4
 * address), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */

/** A host name without the brackets of an IPv6 literal, lower-cased. */
export function bareHost(hostname: string): string {
  const lower = hostname.toLowerCase();
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** "an IPv4-mapped … address", "an unspecified … address", but "a unique local … address". */
export function addressClass(reason: string): string {
  return `${/^(?:[aeio]|un(?!ique)|IPv|IETF)/i.test(reason) ? 'an' : 'a'} ${reason} address`;
}

type V4Rule = [number, number, number, string];

const V4_RULES: V4Rule[] = [
  [0, 0, 8, 'unspecified ("this network")'],
  [10, 0, 8, 'private'],
  [100, 64, 10, 'carrier-grade NAT'],
  [127, 0, 8, 'loopback'],
  [169, 254, 16, 'link-local'],
  [172, 16, 12, 'private'],
  [192, 0, 24, 'IETF protocol assignment'],
  [192, 168, 16, 'private'],
  [198, 18, 15, 'benchmarking'],
  [224, 0, 4, 'multicast'],
  [240, 0, 4, 'reserved'],
];
// Three more /24s for documentation (TEST-NET-1..3).
const V4_DOC = [
  [192, 0, 2],
  [198, 51, 100],
  [203, 0, 113],
];

function v4Refusal(bytes: number[]): string | null {
  const value = ((bytes[0]! << 24) >>> 0) + (bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!;
  for (const [a, b, bits, reason] of V4_RULES) {
    const base = ((a << 24) >>> 0) + (b << 16);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === (base & mask) >>> 0) return reason;
  }
  for (const [a, b, c] of V4_DOC) if (bytes[0] === a && bytes[1] === b && bytes[2] === c) return 'documentation';
  return null;
}

export function parseV4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** 16 bytes of an IPv6 address (zone id dropped), or null. */
export function parseV6(text: string): number[] | null {
  let input = text.split('%')[0]!;
  let tail: number[] = [];
  const lastColon = input.lastIndexOf(':');
  if (input.slice(lastColon + 1).includes('.')) {
    const v4 = parseV4(input.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    input = `${input.slice(0, lastColon + 1)}0:0`;
  }
  const halves = input.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const group of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    const value = parseInt(group, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function v6Refusal(b: number[]): string | null {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const embedded = (at: number, label: string) => {
    const reason = v4Refusal(b.slice(at, at + 4));
    return reason ? `${label} ${reason}` : null;
  };
  if (zero(0, 15) && b[15] === 0) return 'unspecified';
  if (zero(0, 15) && b[15] === 1) return 'loopback';
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return embedded(12, 'IPv4-mapped');
  if (zero(0, 12)) return 'IPv4-compatible (deprecated)';
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zero(4, 12)) return embedded(12, 'NAT64');
    if (b[4] === 0 && b[5] === 1) return 'local-use NAT64';
  }
  if (b[0] === 0x01 && b[1] === 0x00 && zero(2, 8)) return 'discard-only';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'documentation';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return 'Teredo';
  if (b[0] === 0x20 && b[1] === 0x02) return embedded(2, '6to4');
  if ((b[0]! & 0xfe) === 0xfc) return 'unique local (private)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'site-local (deprecated)';
  if (b[0] === 0xff) return 'multicast';
  return null;
}

/** Why an address may not be a target ("loopback", "private", …), or null for a public address. */
export function refusalOf(address: string): string | null {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return v4Refusal(parseV4(address)!);
  if (family === 6) {
    const bytes = parseV6(address);
    return bytes ? v6Refusal(bytes) : 'unparsable';
  }
  return 'unparsable';
}

/** The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d) connects to, or null. */
export function mappedV4(address: string): string | null {
  if (isIP(address.split('%')[0]!) !== 6) return null;
  const b = parseV6(address);
  if (!b || !b.slice(0, 10).every((x) => x === 0) || b[10] !== 0xff || b[11] !== 0xff) return null;
  return b.slice(12).join('.');
}
