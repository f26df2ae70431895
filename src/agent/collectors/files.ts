import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import type { ReportConfigCheck, ReportFile } from '../report-schema.js';
import type { CollectContext, CollectionResult } from '../context.js';
import { idNames } from './accounts.js';

/**
 * File integrity: SHA-256, size, mtime, mode and ownership of the monitored files. The built-in list
 * holds the files whose change matters on any Linux host (accounts, sudo, SSH, cron, PAM, mounts);
 * `--fim PATH` adds files or directories. A file the agent may not read (an unprivileged agent and
 * /etc/shadow) is reported with its metadata and a null hash.
 *
 * Config checks: facts the agent derives from configuration files it reads, so the report carries
 * conclusions and never file contents. sshd's effective global settings follow sshd_config(5): the
 * first value obtained wins, Include files are read in place, and Match blocks are not global.
 */

export const DEFAULT_FIM_PATHS = [
  '/etc/passwd',
  '/etc/group',
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/sudoers',
  '/etc/ssh/sshd_config',
  '/etc/crontab',
  '/etc/hosts',
  '/etc/fstab',
  '/etc/login.defs',
  '/etc/pam.d/common-auth',
  '/etc/pam.d/common-password',
  '/etc/pam.d/sshd',
  '/etc/pam.d/su',
  '/etc/security/limits.conf',
  '/etc/sysctl.conf',
  '/etc/resolv.conf',
  '/etc/nsswitch.conf',
  '/etc/ld.so.preload',
];
const DEFAULT_FIM_DIRS = ['/etc/sudoers.d', '/etc/cron.d', '/etc/ssh/sshd_config.d'];

const MAX_FILES = 5_000;
const MAX_DEPTH = 4;
/** Files above this size get metadata but no hash (a monitored path should not be a disk image). */
const MAX_HASH_BYTES = 512 * 1024 * 1024;

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

interface Walk {
  files: string[];
  missing: string[];
  truncated: boolean;
}

async function expand(ctx: CollectContext, path: string, depth: number, walk: Walk, explicit: boolean): Promise<void> {
  if (walk.files.length >= MAX_FILES) {
    walk.truncated = true;
    return;
  }
  let info;
  try {
    info = await stat(ctx.path(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (explicit && code === 'ENOENT') walk.missing.push(path);
    else if (explicit) walk.missing.push(`${path} (${code})`);
    return;
  }
  if (info.isFile()) {
    walk.files.push(path);
    return;
  }
  if (!info.isDirectory() || depth >= MAX_DEPTH) return;
  let names: string[];
  try {
    names = (await readdir(ctx.path(path))).sort();
  } catch {
    walk.missing.push(`${path} (not readable)`);
    return;
  }
  for (const name of names) await expand(ctx, posix.join(path, name), depth + 1, walk, false);
}

export async function monitoredPaths(ctx: CollectContext): Promise<Walk> {
  const walk: Walk = { files: [], missing: [], truncated: false };
  if (ctx.defaultFim) {
    for (const p of [...DEFAULT_FIM_PATHS, ...DEFAULT_FIM_DIRS]) await expand(ctx, p, 0, walk, false);
  }
  for (const p of ctx.fimPaths) await expand(ctx, posix.resolve('/', p), 0, walk, true);
  walk.files = [...new Set(walk.files)];
  return walk;
}

export async function collectFileIntegrity(ctx: CollectContext): Promise<CollectionResult<ReportFile>> {
  const walk = await monitoredPaths(ctx);
  const { users, groups } = await idNames(ctx);
  const items: ReportFile[] = [];
  const unreadable: string[] = [];
  for (const path of walk.files) {
    let info;
    try {
      info = await stat(ctx.path(path));
    } catch {
      continue; // removed meanwhile
    }
    let digest: string | null = null;
    if (info.size <= MAX_HASH_BYTES) {
      try {
        digest = await sha256(ctx.path(path));
      } catch {
        unreadable.push(path);
      }
    }
    items.push({
      path,
      sha256: digest,
      size_bytes: info.size,
      modified_at: info.mtime.toISOString(),
      permissions: (info.mode & 0o7777).toString(8).padStart(4, '0'),
      owner: users.get(info.uid) ?? String(info.uid),
      group: groups.get(info.gid) ?? String(info.gid),
    });
  }
  const notes: string[] = [];
  if (unreadable.length) notes.push(`not readable, no hash${ctx.privileged ? '' : ' (needs root)'}: ${unreadable.join(', ')}`);
  if (walk.missing.length) notes.push(`not found: ${walk.missing.join(', ')}`);
  if (walk.truncated) notes.push(`only the first ${MAX_FILES} files are monitored`);
  return { items, status: unreadable.length || walk.missing.length || walk.truncated ? 'partial' : 'ok', reason: notes.length ? notes.join('; ') : null };
}

interface SshdValue {
  value: string;
  source: string;
}

function glob(pattern: string, names: string[]): string[] {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return names.filter((n) => re.test(n)).sort();
}

/** The effective global sshd settings (keywords lower-cased), first value wins. */
export async function sshdSettings(ctx: CollectContext, path = '/etc/ssh/sshd_config'): Promise<Map<string, SshdValue> | null> {
  const settings = new Map<string, SshdValue>();
  const seen = new Set<string>();
  let inMatch = false;
  const read = async (file: string, depth: number): Promise<boolean> => {
    if (seen.has(file) || depth > 8) return true;
    seen.add(file);
    const text = await ctx.readText(file);
    if (text === null) return false;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (!line || line.startsWith('#')) continue;
      const m = /^(\S+)\s*(?:=\s*|\s+)(.*)$/.exec(line);
      if (!m) continue;
      const keyword = m[1]!.toLowerCase();
      const value = m[2]!
        .replace(/\s+#.*$/, '')
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (keyword === 'match') {
        inMatch = true;
        continue;
      }
      if (keyword === 'include') {
        for (const pattern of value.split(/\s+/)) {
          const full = pattern.startsWith('/') ? pattern : join('/etc/ssh', pattern);
          let names: string[] = [];
          try {
            names = await readdir(ctx.path(dirname(full)));
          } catch {
            continue;
          }
          for (const name of glob(full.slice(dirname(full).length + 1), names)) await read(join(dirname(full), name), depth + 1);
        }
        continue;
      }
      if (inMatch || settings.has(keyword)) continue;
      settings.set(keyword, { value, source: `${file}:${i + 1}` });
    }
    return true;
  };
  return (await read(path, 0)) ? settings : null;
}

const SSHD_DEFAULTS: Record<string, string> = {
  permitrootlogin: 'prohibit-password',
  permitemptypasswords: 'no',
  passwordauthentication: 'yes',
  x11forwarding: 'no',
};

export async function collectConfigChecks(ctx: CollectContext): Promise<CollectionResult<ReportConfigCheck>> {
  const items: ReportConfigCheck[] = [];
  const notes: string[] = [];
  const sshd = await sshdSettings(ctx);
  if (sshd) {
    for (const [keyword, id] of [
      ['permitrootlogin', 'sshd.permit_root_login'],
      ['permitemptypasswords', 'sshd.permit_empty_passwords'],
      ['passwordauthentication', 'sshd.password_authentication'],
      ['x11forwarding', 'sshd.x11_forwarding'],
    ] as const) {
      const found = sshd.get(keyword);
      let value = (found?.value ?? SSHD_DEFAULTS[keyword]!).toLowerCase();
      if (value === 'without-password') value = 'prohibit-password';
      items.push({ id, value, source: found?.source ?? 'default' });
    }
  } else {
    const exists = await stat(ctx.path('/etc/ssh/sshd_config')).then(
      () => true,
      () => false,
    );
    if (exists) notes.push('/etc/ssh/sshd_config is not readable');
  }
  for (const [file, id] of [
    ['/proc/sys/kernel/randomize_va_space', 'sysctl.kernel.randomize_va_space'],
    ['/proc/sys/net/ipv4/ip_forward', 'sysctl.net.ipv4.ip_forward'],
  ] as const) {
    const value = (await ctx.readText(file))?.trim();
    if (value !== undefined && value !== '') items.push({ id, value, source: file });
  }
  return notes.length ? { items, status: 'partial', reason: notes.join('; ') } : { items };
}
