import { networkInterfaces } from 'node:os';
import { readdir } from 'node:fs/promises';
import type { ReportConnection, ReportInterface, ReportListeningPort } from '../report-schema.js';
import { TCP_STATES } from '../report-schema.js';
import { Skip, type CollectContext, type CollectionResult } from '../context.js';
import { socketOwners } from './processes.js';

/**
 * Sockets from /proc/net/{tcp,tcp6,udp,udp6} (the agent's network namespace) and interfaces from
 * /sys/class/net. The socket → process link needs the process's file descriptors, which only its
 * owner (or root) can read: an unprivileged agent reports other users' sockets without a pid.
 */

const MAX_CONNECTIONS = 20_000;

export interface SocketRow {
  protocol: 'tcp' | 'udp';
  family: 4 | 6;
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  state: string;
  inode: string;
}

function hexToIpv4(hex: string): string {
  // Little-endian 32-bit word.
  const n = parseInt(hex, 16);
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255].join('.');
}

function hexToIpv6(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < 4; word++) {
    const chunk = hex.slice(word * 8, word * 8 + 8);
    for (let b = 3; b >= 0; b--) bytes.push(parseInt(chunk.slice(b * 2, b * 2 + 2), 16));
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  // Compress the longest run of zero groups.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

const STATE_CODES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
  '0C': 'NEW_SYN_RECV',
};

export function parseProcNet(text: string, protocol: 'tcp' | 'udp', family: 4 | 6): SocketRow[] {
  const rows: SocketRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [localHex, localPortHex] = f[1]!.split(':') as [string, string];
    const [remoteHex, remotePortHex] = f[2]!.split(':') as [string, string];
    const ip = family === 4 ? hexToIpv4 : hexToIpv6;
    rows.push({
      protocol,
      family,
      localAddress: ip(localHex),
      localPort: parseInt(localPortHex, 16),
      remoteAddress: ip(remoteHex),
      remotePort: parseInt(remotePortHex, 16),
      state: STATE_CODES[f[3]!.toUpperCase()] ?? f[3]!,
      inode: f[9]!,
    });
  }
  return rows;
}

export function sockets(ctx: CollectContext): Promise<SocketRow[]> {
  return ctx.memo('sockets', async () => {
    const files: Array<[string, 'tcp' | 'udp', 4 | 6]> = [
      ['tcp', 'tcp', 4],
      ['tcp6', 'tcp', 6],
      ['udp', 'udp', 4],
      ['udp6', 'udp', 6],
    ];
    const rows: SocketRow[] = [];
    let read = 0;
    for (const [file, protocol, family] of files) {
      const text = await ctx.readText(`/proc/net/${file}`);
      if (text === null) continue;
      read++;
      rows.push(...parseProcNet(text, protocol, family));
    }
    if (read === 0) throw new Skip('/proc/net is not readable');
    return rows;
  });
}

const endpoint = (address: string, port: number, family: 4 | 6) => (family === 6 ? `[${address}]:${port}` : `${address}:${port}`);

function unresolvedNote(ctx: CollectContext, missing: number): Pick<CollectionResult<unknown>, 'status' | 'reason'> {
  if (!missing) return {};
  return ctx.privileged
    ? { reason: `${missing} socket(s) without an owning process (closed meanwhile, or in the kernel)` }
    : { status: 'partial', reason: `${missing} socket(s) of other users' processes have no pid (the agent is not running as root)` };
}

export async function collectListeningPorts(ctx: CollectContext): Promise<CollectionResult<ReportListeningPort>> {
  const [rows, owners] = await Promise.all([sockets(ctx), socketOwners(ctx)]);
  const seen = new Set<string>();
  const items: ReportListeningPort[] = [];
  let missing = 0;
  for (const s of rows) {
    const listening = s.protocol === 'tcp' ? s.state === 'LISTEN' : s.remotePort === 0 && s.localPort !== 0;
    if (!listening) continue;
    const key = `${s.protocol}/${s.localAddress}/${s.localPort}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const owner = owners.get(s.inode);
    if (!owner) missing++;
    items.push({ port: s.localPort, protocol: s.protocol, address: s.localAddress, pid: owner?.pid ?? null, process: owner?.name ?? null });
  }
  items.sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol) || a.address.localeCompare(b.address));
  return { items, ...unresolvedNote(ctx, missing) };
}

export async function collectConnections(ctx: CollectContext): Promise<CollectionResult<ReportConnection>> {
  const [rows, owners] = await Promise.all([sockets(ctx), socketOwners(ctx)]);
  const items: ReportConnection[] = [];
  let missing = 0;
  for (const s of rows) {
    if (s.protocol !== 'tcp' || s.state === 'LISTEN' || !(TCP_STATES as readonly string[]).includes(s.state)) continue;
    if (items.length >= MAX_CONNECTIONS) break;
    const owner = owners.get(s.inode);
    // TIME_WAIT sockets belong to no process any more.
    if (!owner && s.inode !== '0') missing++;
    items.push({
      local_address: endpoint(s.localAddress, s.localPort, s.family),
      remote_address: endpoint(s.remoteAddress, s.remotePort, s.family),
      state: s.state as ReportConnection['state'],
      pid: owner?.pid ?? null,
      process: owner?.name ?? null,
    });
  }
  return { items, ...unresolvedNote(ctx, missing) };
}

export async function collectInterfaces(ctx: CollectContext): Promise<CollectionResult<ReportInterface>> {
  let names: string[];
  try {
    names = (await readdir(ctx.path('/sys/class/net'))).sort();
  } catch {
    names = Object.keys(networkInterfaces()).sort();
    if (names.length === 0) throw new Skip('/sys/class/net is not readable');
  }
  const addresses = ctx.root === '/' ? networkInterfaces() : {};
  const items: ReportInterface[] = [];
  for (const name of names) {
    const read = async (attr: string) => (await ctx.readText(`/sys/class/net/${name}/${attr}`))?.trim() ?? null;
    const [mac, mtu, state] = await Promise.all([read('address'), read('mtu'), read('operstate')]);
    const addrs = addresses[name] ?? [];
    items.push({
      name,
      mac: mac ?? addrs[0]?.mac ?? null,
      ipv4: addrs.filter((a) => a.family === 'IPv4').map((a) => a.address),
      ipv6: addrs.filter((a) => a.family === 'IPv6').map((a) => a.address),
      mtu: mtu !== null && /^\d+$/.test(mtu) ? Number(mtu) : null,
      state: state ?? 'unknown',
    });
  }
  return { items };
}
