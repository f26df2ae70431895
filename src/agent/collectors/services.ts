import { readdir, readlink } from 'node:fs/promises';
import type { ReportService } from '../report-schema.js';
import { firstLine, Skip, type CollectContext, type CollectionResult } from '../context.js';

/**
 * System services. With systemd running: `systemctl list-units` (state) and `list-unit-files`
 * (enablement), which any user may query. Without it (a container, or another init): the unit files
 * on disk, enabled when a `*.wants` link points at them, state unknown; failing that, SysV init
 * scripts with their rc?.d start links.
 */

const UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'];

export function parseListUnits(text: string): Map<string, { active: string; sub: string; description: string }> {
  const out = new Map<string, { active: string; sub: string; description: string }>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^[●*]\s*/, '').trim();
    const m = /^(\S+\.service)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (m) out.set(m[1]!, { active: m[3]!, sub: m[4]!, description: m[5]!.trim() });
  }
  return out;
}

export function parseListUnitFiles(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\S+\.service)\s+(\S+)/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

const ENABLED_STATES = new Set(['enabled', 'enabled-runtime', 'alias', 'linked', 'linked-runtime']);

async function fromSystemctl(ctx: CollectContext, systemctl: string): Promise<ReportService[] | string> {
  const [units, files] = await Promise.all([
    ctx.run(systemctl, ['list-units', '--type=service', '--all', '--no-legend', '--no-pager', '--plain'], { timeoutMs: 30_000 }),
    ctx.run(systemctl, ['list-unit-files', '--type=service', '--no-legend', '--no-pager'], { timeoutMs: 30_000 }),
  ]);
  if (!units.ok) return units.error ?? (firstLine(units.stderr) || `exit ${units.code}`);
  const state = parseListUnits(units.stdout);
  const enablement = files.ok ? parseListUnitFiles(files.stdout) : new Map<string, string>();
  const names = [...new Set([...state.keys(), ...enablement.keys()])].filter((n) => !n.includes('@.')).sort();
  return names.map((name) => {
    const s = state.get(name);
    return {
      name,
      status: s ? (s.active === 'active' ? s.sub : s.active) : 'inactive',
      enabled: ENABLED_STATES.has(enablement.get(name) ?? ''),
      description: s?.description || null,
    };
  });
}

async function unitFiles(ctx: CollectContext): Promise<ReportService[]> {
  const units = new Map<string, string | null>();
  for (const dir of UNIT_DIRS) {
    let names: string[];
    try {
      names = await readdir(ctx.path(dir));
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith('.service') && !n.includes('@.')).sort()) {
      if (units.has(name)) continue;
      const text = await ctx.readText(`${dir}/${name}`);
      units.set(name, text ? (/^Description=(.*)$/m.exec(text)?.[1]?.trim() ?? null) : null);
    }
  }
  const enabled = new Set<string>();
  try {
    for (const wants of (await readdir(ctx.path('/etc/systemd/system'))).filter((d) => d.endsWith('.wants'))) {
      for (const link of await readdir(ctx.path(`/etc/systemd/system/${wants}`))) enabled.add(link);
    }
  } catch {
    // nothing enabled
  }
  return [...units.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, description]) => ({ name, status: 'unknown', enabled: enabled.has(name), description }));
}

async function sysvScripts(ctx: CollectContext): Promise<ReportService[]> {
  let scripts: string[];
  try {
    scripts = (await readdir(ctx.path('/etc/init.d'))).filter((n) => !n.startsWith('.') && n !== 'README' && !n.endsWith('.sh')).sort();
  } catch {
    return [];
  }
  const started = new Set<string>();
  for (const level of ['2', '3', '4', '5', 'S']) {
    try {
      for (const link of await readdir(ctx.path(`/etc/rc${level}.d`))) {
        if (!link.startsWith('S')) continue;
        try {
          started.add((await readlink(ctx.path(`/etc/rc${level}.d/${link}`))).split('/').pop()!);
        } catch {
          started.add(link.replace(/^S\d\d/, ''));
        }
      }
    } catch {
      // no such runlevel directory
    }
  }
  return scripts.map((name) => ({ name, status: 'unknown', enabled: started.has(name), description: null }));
}

export async function collectServices(ctx: CollectContext): Promise<CollectionResult<ReportService>> {
  const pid1 = (await ctx.readText('/proc/1/comm'))?.trim() ?? null;
  const systemctl = ctx.root === '/' ? await ctx.which('systemctl') : null;
  let note: string;
  if (pid1 === 'systemd' && systemctl) {
    const services = await fromSystemctl(ctx, systemctl);
    if (typeof services !== 'string') return { items: services };
    note = `systemctl failed (${services})`;
  } else {
    note = pid1 === 'systemd' ? 'systemctl is not available here' : `systemd is not running (PID 1 is ${pid1 ?? 'unknown'})`;
  }
  const files = await unitFiles(ctx);
  if (files.length) return { items: files, status: 'partial', reason: `${note}: unit files on disk, enablement from /etc/systemd/system/*.wants, state unknown` };
  const sysv = await sysvScripts(ctx);
  if (sysv.length) return { items: sysv, status: 'partial', reason: `${note}: SysV init scripts, state unknown` };
  throw new Skip(`${note}, and no unit files or init scripts were found`);
}
