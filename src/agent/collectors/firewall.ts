import type { ReportFirewallPolicy, ReportFirewallRule } from '../report-schema.js';
import { firstLine, Skip, type CollectContext, type CollectionResult } from '../context.js';

/**
 * The host firewall from `iptables-save` / `ip6tables-save` (filter table) and `nft -j list ruleset`,
 * whichever are installed. Both need root (CAP_NET_ADMIN): an unprivileged agent reports the
 * collection as skipped with the tool's own message. Default policies of the filtering base chains
 * go to firewall_policies, the rules to firewall_rules.
 */

interface Firewall {
  rules: ReportFirewallRule[];
  policies: ReportFirewallPolicy[];
  notes: string[];
}

/** Splits an iptables-save rule line into arguments, honouring double quotes. */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  return out;
}

const IPT_HOOKS: Record<string, string> = { INPUT: 'input', FORWARD: 'forward', OUTPUT: 'output', PREROUTING: 'prerouting', POSTROUTING: 'postrouting' };

export function parseIptablesSave(text: string, backend: 'iptables' | 'ip6tables'): { rules: ReportFirewallRule[]; policies: ReportFirewallPolicy[] } {
  const rules: ReportFirewallRule[] = [];
  const policies: ReportFirewallPolicy[] = [];
  let table = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      table = line.slice(1);
      continue;
    }
    if (table !== 'filter') continue;
    const chain = /^:(\S+)\s+(\S+)/.exec(line);
    if (chain) {
      if (chain[2] !== '-') {
        policies.push({ backend, family: backend === 'iptables' ? 'ip' : 'ip6', table, chain: chain[1]!, hook: IPT_HOOKS[chain[1]!] ?? null, policy: chain[2]!.toUpperCase() });
      }
      continue;
    }
    if (!line.startsWith('-A ')) continue;
    const args = splitArgs(line);
    const value = (...flags: string[]) => {
      for (let i = 0; i < args.length - 1; i++) if (flags.includes(args[i]!)) return (args[i - 1] === '!' ? '!' : '') + args[i + 1]!;
      return null;
    };
    rules.push({
      chain: args[1]!,
      action: value('-j', '--jump', '-g', '--goto') ?? 'none',
      protocol: value('-p', '--protocol'),
      source: value('-s', '--source'),
      destination: value('-d', '--destination'),
      dport: value('--dport', '--destination-port', '--dports', '--destination-ports'),
      comment: value('--comment'),
    });
  }
  return { rules, policies };
}

type NftObject = Record<string, Record<string, unknown>>;

function nftValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  if (Array.isArray(v)) return v.map(nftValue).join(',');
  const o = v as Record<string, unknown>;
  if (o.set) return nftValue(o.set);
  if (o.range) return (o.range as unknown[]).map(nftValue).join(':');
  if (o.prefix) {
    const p = o.prefix as { addr: unknown; len: unknown };
    return `${nftValue(p.addr)}/${nftValue(p.len)}`;
  }
  return JSON.stringify(v);
}

export function parseNftJson(text: string): { rules: ReportFirewallRule[]; policies: ReportFirewallPolicy[] } {
  const doc = JSON.parse(text) as { nftables?: NftObject[] };
  const rules: ReportFirewallRule[] = [];
  const policies: ReportFirewallPolicy[] = [];
  for (const entry of doc.nftables ?? []) {
    if (entry.chain) {
      const c = entry.chain as { family: string; table: string; name: string; type?: string; hook?: string; policy?: string };
      if (c.type === 'filter' && c.hook) {
        policies.push({
          backend: 'nftables',
          family: (['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'].includes(c.family) ? c.family : 'inet') as ReportFirewallPolicy['family'],
          table: c.table,
          chain: c.name,
          hook: c.hook,
          policy: (c.policy ?? 'accept').toUpperCase(),
        });
      }
    }
    if (entry.rule) {
      const r = entry.rule as { chain: string; table: string; family: string; expr?: Array<Record<string, unknown>>; comment?: string };
      const rule: ReportFirewallRule = {
        chain: `${r.family} ${r.table} ${r.chain}`,
        action: 'none',
        protocol: null,
        source: null,
        destination: null,
        dport: null,
        comment: r.comment ?? null,
      };
      for (const e of r.expr ?? []) {
        const match = e.match as { op?: string; left?: Record<string, unknown>; right?: unknown } | undefined;
        if (match?.left?.payload) {
          const p = match.left.payload as { protocol?: string; field?: string };
          const value = (match.op === '!=' ? '!' : '') + nftValue(match.right);
          if (p.field === 'dport') {
            rule.dport = value;
            rule.protocol ??= p.protocol ?? null;
          } else if (p.field === 'saddr') rule.source = value;
          else if (p.field === 'daddr') rule.destination = value;
        } else if (match?.left?.meta && (match.left.meta as { key?: string }).key === 'l4proto') {
          rule.protocol = nftValue(match.right);
        }
        for (const verdict of ['accept', 'drop', 'reject', 'return', 'jump', 'goto', 'queue']) {
          if (verdict in e) {
            const target = (e[verdict] as { target?: string } | null)?.target;
            rule.action = target ? `${verdict} ${target}` : verdict;
          }
        }
      }
      rules.push(rule);
    }
  }
  return { rules, policies };
}

function firewall(ctx: CollectContext): Promise<Firewall> {
  return ctx.memo('firewall', async () => {
    if (ctx.root !== '/') throw new Skip('the firewall is read with iptables-save/nft, which only run against the host root /');
    const tools = {
      iptables: await ctx.which('iptables-save'),
      ip6tables: await ctx.which('ip6tables-save'),
      nft: await ctx.which('nft'),
    };
    if (!tools.iptables && !tools.ip6tables && !tools.nft) throw new Skip('neither iptables-save nor nft is installed');
    const result: Firewall = { rules: [], policies: [], notes: [] };
    let readable = 0;
    for (const backend of ['iptables', 'ip6tables'] as const) {
      const tool = tools[backend];
      if (!tool) continue;
      const out = await ctx.run(tool, [], { timeoutMs: 30_000 });
      if (!out.ok) {
        result.notes.push(`${backend}-save: ${out.error ?? (firstLine(out.stderr) || `exit ${out.code}`)}`);
        continue;
      }
      readable++;
      const parsed = parseIptablesSave(out.stdout, backend);
      result.rules.push(...parsed.rules);
      result.policies.push(...parsed.policies);
    }
    if (tools.nft) {
      const out = await ctx.run(tools.nft, ['-j', 'list', 'ruleset'], { timeoutMs: 30_000 });
      if (!out.ok) result.notes.push(`nft: ${out.error ?? (firstLine(out.stderr) || `exit ${out.code}`)}`);
      else {
        try {
          const parsed = parseNftJson(out.stdout || '{"nftables":[]}');
          readable++;
          result.rules.push(...parsed.rules);
          result.policies.push(...parsed.policies);
        } catch (error) {
          result.notes.push(`nft: unreadable JSON (${(error as Error).message})`);
        }
      }
    }
    if (readable === 0) throw new Skip(`the firewall could not be read${ctx.privileged ? '' : ' (needs root)'}: ${result.notes.join('; ')}`);
    return result;
  });
}

export async function collectFirewallRules(ctx: CollectContext): Promise<CollectionResult<ReportFirewallRule>> {
  const fw = await firewall(ctx);
  return fw.notes.length ? { items: fw.rules, status: 'partial', reason: fw.notes.join('; ') } : { items: fw.rules };
}

export async function collectFirewallPolicies(ctx: CollectContext): Promise<CollectionResult<ReportFirewallPolicy>> {
  const fw = await firewall(ctx);
  return fw.notes.length ? { items: fw.policies, status: 'partial', reason: fw.notes.join('; ') } : { items: fw.policies };
}
