import { readdirSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReportPackage } from '../report-schema.js';
import { firstLine, Skip, type CollectContext, type CollectionResult } from '../context.js';

/**
 * Installed packages from the package databases, read as files where they are files (dpkg's status,
 * apk's installed) and through `rpm -qa` for the RPM database (a Berkeley DB or SQLite file that only
 * rpm reads reliably; `rpm --root` for a mounted host). Every database found is read; a host with none is skipped.
 */

/** The fields of a dpkg paragraph the report uses; none of them spans lines. */
const DPKG_FIELDS = new Set(['Package', 'Version', 'Status', 'Source', 'Architecture']);

/**
 * dpkg's status file: one paragraph per package; only "install ok installed" ones count. Read line
 * by line keeping only the fields above: the file is about 1 KB per package, mostly descriptions
 * and conffiles, and building those strings was most of the agent's parsing time (issue 28's budget).
 */
export function parseDpkgStatus(text: string): Array<Omit<ReportPackage, 'installed_at'>> {
  const out: Array<Omit<ReportPackage, 'installed_at'>> = [];
  let fields = new Map<string, string>();
  const finish = () => {
    const paragraph = fields;
    fields = new Map();
    const name = paragraph.get('Package');
    const version = paragraph.get('Version');
    const status = paragraph.get('Status')?.split(/\s+/);
    if (!name || !version || status?.[2] !== 'installed') return;
    const source = /^(\S+)(?:\s+\(([^)]+)\))?/.exec(paragraph.get('Source') ?? '');
    out.push({ name, version, source: 'dpkg', cves: [], arch: paragraph.get('Architecture') ?? null, source_name: source?.[1] ?? name, source_version: source?.[2] ?? version });
  };
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') {
      if (fields.size) finish();
      continue;
    }
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) continue; // a continuation line, of a field the report does not use
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon);
    if (DPKG_FIELDS.has(key)) fields.set(key, line.slice(colon + 1).trim());
  }
  if (fields.size) finish();
  return out;
}

/** apk's installed database: records of `X:value` lines separated by blank lines. */
export function parseApkInstalled(text: string): ReportPackage[] {
  const out: ReportPackage[] = [];
  for (const record of text.split(/\n\s*\n/)) {
    const f = new Map<string, string>();
    for (const line of record.split('\n')) if (line[1] === ':') f.set(line[0]!, line.slice(2));
    const name = f.get('P');
    const version = f.get('V');
    if (!name || !version) continue;
    out.push({ name, version, source: 'apk', installed_at: null, cves: [], arch: f.get('A') ?? null, source_name: f.get('o') ?? name, source_version: version });
  }
  return out;
}

/** `rpm -qa` with a tab-separated query format (see RPM_FORMAT). */
export function parseRpmQuery(text: string): ReportPackage[] {
  const out: ReportPackage[] = [];
  for (const line of text.split('\n')) {
    const [name, epoch, version, release, arch, installed, sourceRpm] = line.split('\t');
    if (!name || !version || name === 'gpg-pubkey') continue;
    const full = `${epoch && epoch !== '(none)' && epoch !== '0' ? `${epoch}:` : ''}${version}${release && release !== '(none)' ? `-${release}` : ''}`;
    const src = /^(.+)-([^-]+)-([^-]+)\.(?:no)?src\.rpm$/.exec(sourceRpm ?? '');
    const seconds = Number(installed);
    out.push({
      name,
      version: full,
      source: 'rpm',
      installed_at: Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : null,
      cves: [],
      arch: arch && arch !== '(none)' ? arch : null,
      source_name: src?.[1] ?? name,
      source_version: src ? `${src[2]}-${src[3]}` : full,
    });
  }
  return out;
}

const RPM_FORMAT = '%{NAME}\\t%{EPOCH}\\t%{VERSION}\\t%{RELEASE}\\t%{ARCH}\\t%{INSTALLTIME}\\t%{SOURCERPM}\\n';

/**
 * When dpkg installed each package: the modification time of its file list. One directory listing
 * says which name each list has (`<name>:<arch>.list` for multi-arch packages, else `<name>.list`),
 * so each package costs one stat, done synchronously: the info directory is local and a promise per
 * stat cost more CPU than the stat (issue 28's cycle budget).
 */
function dpkgInstallTimes(ctx: CollectContext, packages: Array<Omit<ReportPackage, 'installed_at'>>): ReportPackage[] {
  const dir = ctx.path('/var/lib/dpkg/info');
  let lists: Set<string>;
  try {
    lists = new Set(readdirSync(dir).filter((f) => f.endsWith('.list')));
  } catch {
    lists = new Set();
  }
  return packages.map((p) => {
    const file = [`${p.name}:${p.arch}.list`, `${p.name}.list`].find((f) => lists.has(f));
    let installed: string | null = null;
    if (file) {
      try {
        installed = statSync(join(dir, file)).mtime.toISOString();
      } catch {
        // removed while we looked
      }
    }
    return { ...p, installed_at: installed };
  });
}

export async function collectPackages(ctx: CollectContext): Promise<CollectionResult<ReportPackage>> {
  const items: ReportPackage[] = [];
  const problems: string[] = [];
  let databases = 0;

  const dpkg = await ctx.readText('/var/lib/dpkg/status');
  if (dpkg !== null) {
    databases++;
    items.push(...dpkgInstallTimes(ctx, parseDpkgStatus(dpkg)));
  }
  const apk = await ctx.readText('/lib/apk/db/installed');
  if (apk !== null) {
    databases++;
    items.push(...parseApkInstalled(apk));
  }
  const rpmDb = (
    await Promise.all(
      ['/var/lib/rpm', '/usr/lib/sysimage/rpm'].map((p) =>
        stat(ctx.path(p)).then(
          () => true,
          () => false,
        ),
      ),
    )
  ).some(Boolean);
  if (rpmDb) {
    const rpm = await ctx.which('rpm');
    if (!rpm) problems.push('an RPM database exists but the rpm command is missing');
    else {
      // A mounted host (--root) is read with rpm's own --root, which opens that root's database.
      const args = [...(ctx.root === '/' ? [] : ['--root', ctx.root]), '-qa', '--qf', RPM_FORMAT];
      const result = await ctx.run(rpm, args, { timeoutMs: 120_000 });
      if (result.ok) {
        databases++;
        items.push(...parseRpmQuery(result.stdout));
      } else problems.push(`rpm -qa failed: ${result.error ?? firstLine(result.stderr)}`);
    }
  }
  if (databases === 0) throw new Skip(problems.length ? problems.join('; ') : 'no package database found (dpkg, rpm or apk)');
  return problems.length ? { items, status: 'partial', reason: problems.join('; ') } : { items };
}
