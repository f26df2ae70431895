import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReportLocalUser, ReportSudoAccess } from '../report-schema.js';
import { Skip, type CollectContext, type CollectionResult } from '../context.js';

/**
 * Local accounts from /etc/passwd and /etc/group; the password status from /etc/shadow when it is
 * readable (root only). Only whether the password field is empty, locked or set is kept: the field
 * itself is dropped as soon as it is classified and never leaves this function.
 */

export interface PasswdEntry {
  username: string;
  password: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export function parsePasswd(text: string): PasswdEntry[] {
  const out: PasswdEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const f = line.split(':');
    if (f.length < 7) continue;
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid < 0 || gid < 0) continue;
    out.push({ username: f[0]!, password: f[1]!, uid, gid, home: f[5]!, shell: f.slice(6).join(':') });
  }
  return out;
}

export interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

export function parseGroup(text: string): GroupEntry[] {
  const out: GroupEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const f = line.split(':');
    if (f.length < 4) continue;
    const gid = Number(f[2]);
    if (!Number.isInteger(gid)) continue;
    out.push({
      name: f[0]!,
      gid,
      members: f[3]!
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    });
  }
  return out;
}

export function passwdEntries(ctx: CollectContext): Promise<PasswdEntry[]> {
  return ctx.memo('passwd', async () => {
    const text = await ctx.readText('/etc/passwd');
    if (text === null) throw new Skip('/etc/passwd is not readable');
    return parsePasswd(text);
  });
}

export function groupEntries(ctx: CollectContext): Promise<GroupEntry[]> {
  return ctx.memo('group', async () => parseGroup((await ctx.readText('/etc/group')) ?? ''));
}

/** uid → user name and gid → group name, for processes and files. */
export function idNames(ctx: CollectContext): Promise<{ users: Map<number, string>; groups: Map<number, string> }> {
  return ctx.memo('id-names', async () => {
    const users = new Map<number, string>();
    const groups = new Map<number, string>();
    try {
      for (const p of await passwdEntries(ctx)) if (!users.has(p.uid)) users.set(p.uid, p.username);
    } catch {
      // no passwd: numeric ids only
    }
    for (const g of await groupEntries(ctx)) if (!groups.has(g.gid)) groups.set(g.gid, g.name);
    return { users, groups };
  });
}

export type PasswordStatus = ReportLocalUser['password_status'];

/** Classifies a password field (from shadow, or passwd when it holds the hash) without keeping it. */
export function classifyPassword(field: string | undefined): PasswordStatus {
  if (field === undefined) return 'none';
  if (field === '') return 'empty';
  if (field.startsWith('!') || field.startsWith('*')) return 'locked';
  return 'set';
}

/** shadow: user → status. Null when /etc/shadow is not readable. */
async function shadowStatus(ctx: CollectContext): Promise<Map<string, PasswordStatus> | null> {
  const text = await ctx.readText('/etc/shadow');
  if (text === null) return null;
  const out = new Map<string, PasswordStatus>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const rest = line.slice(colon + 1);
    const end = rest.indexOf(':');
    out.set(line.slice(0, colon), classifyPassword(end < 0 ? rest : rest.slice(0, end)));
  }
  return out;
}

const LASTLOG_RECORD = 292; // struct lastlog on 64-bit Linux: int32 ll_time, char ll_line[32], char ll_host[256]

/** Last login times from /var/log/lastlog (a sparse file indexed by uid), when readable. */
async function lastLogins(ctx: CollectContext, uids: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  let handle;
  try {
    handle = await open(ctx.path('/var/log/lastlog'), 'r');
  } catch {
    return out;
  }
  try {
    const size = (await handle.stat()).size;
    const buffer = Buffer.alloc(4);
    for (const uid of uids) {
      const offset = uid * LASTLOG_RECORD;
      if (offset + 4 > size) continue;
      const { bytesRead } = await handle.read(buffer, 0, 4, offset);
      if (bytesRead !== 4) continue;
      const seconds = buffer.readInt32LE(0);
      if (seconds > 0) out.set(uid, new Date(seconds * 1000).toISOString());
    }
  } finally {
    await handle.close();
  }
  return out;
}

export async function collectLocalUsers(ctx: CollectContext): Promise<CollectionResult<ReportLocalUser>> {
  const entries = await passwdEntries(ctx);
  const shadow = await shadowStatus(ctx);
  const logins = await lastLogins(
    ctx,
    entries.map((e) => e.uid),
  );
  let unknown = 0;
  const items = entries.map((e): ReportLocalUser => {
    let status: PasswordStatus;
    if (e.password !== 'x' && e.password !== '*x*') status = classifyPassword(e.password);
    else if (shadow) status = shadow.get(e.username) ?? 'none';
    else {
      status = 'unknown';
      unknown++;
    }
    return { username: e.username, uid: e.uid, gid: e.gid, home: e.home, shell: e.shell, last_login: logins.get(e.uid) ?? null, password_status: status };
  });
  return unknown ? { items, status: 'partial', reason: `/etc/shadow is not readable (needs root): password status unknown for ${unknown} account(s)` } : { items };
}

interface SudoRule {
  principal: string;
  rule: string;
}

/** Splits the user list of a sudoers user specification: `alice,%admins ALL=(ALL) ALL`. */
function userSpec(line: string): SudoRule[] {
  const match = /^(\S+(?:\s*,\s*\S+)*)\s+(.+)$/.exec(line);
  if (!match) return [];
  const rule = match[2]!.trim();
  if (!rule.includes('=')) return [];
  return match[1]!.split(',').map((p) => ({ principal: p.trim(), rule }));
}

async function readSudoers(ctx: CollectContext, path: string, seen: Set<string>, rules: SudoRule[], unreadable: string[], depth = 0): Promise<void> {
  if (seen.has(path) || depth > 8) return;
  seen.add(path);
  const text = await ctx.readText(path);
  if (text === null) {
    unreadable.push(path);
    return;
  }
  // Continuation lines end with a backslash.
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    const include = /^[#@](include|includedir)\s+(.+)$/.exec(line);
    if (include) {
      const target = include[2]!.trim().replace(/^"|"$/g, '');
      const resolved = target.startsWith('/') ? target : join(path.slice(0, path.lastIndexOf('/')) || '/', target);
      if (include[1] === 'include') {
        await readSudoers(ctx, resolved, seen, rules, unreadable, depth + 1);
      } else {
        let names: string[] = [];
        try {
          names = (await readdir(ctx.path(resolved))).sort();
        } catch {
          unreadable.push(resolved);
        }
        // sudo skips files ending in ~ or containing a dot.
        for (const name of names.filter((n) => !n.endsWith('~') && !n.includes('.'))) await readSudoers(ctx, `${resolved}/${name}`, seen, rules, unreadable, depth + 1);
      }
      continue;
    }
    if (!line || line.startsWith('#')) continue;
    if (/^(Defaults|User_Alias|Runas_Alias|Host_Alias|Cmnd_Alias|Cmd_Alias)\b/.test(line)) continue;
    // One space between words: continuation lines and alignment are layout, not meaning.
    rules.push(...userSpec(line.replace(/\s+#.*$/, '').replace(/\s+/g, ' ')));
  }
}

/**
 * Who may run what through sudo: the user specifications of /etc/sudoers and its includes (readable by
 * root only). A %group principal is reported as written and, for each member, under the member's name
 * with "(via %group)".
 */
export async function collectSudo(ctx: CollectContext): Promise<CollectionResult<ReportSudoAccess>> {
  const main = await ctx.memo('sudoers-exists', async () => {
    try {
      const h = await open(ctx.path('/etc/sudoers'), 'r');
      await h.close();
      return 'readable';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unreadable';
    }
  });
  if (main === 'absent') return { items: [], reason: 'sudo is not installed (no /etc/sudoers)' };
  if (main === 'unreadable') throw new Skip('/etc/sudoers is not readable (needs root)');
  const rules: SudoRule[] = [];
  const unreadable: string[] = [];
  await readSudoers(ctx, '/etc/sudoers', new Set(), rules, unreadable);
  const byUser = new Map<string, string[]>();
  const add = (user: string, rule: string) => {
    const list = byUser.get(user) ?? [];
    if (!list.includes(rule)) list.push(rule);
    byUser.set(user, list);
  };
  const groups = await groupEntries(ctx);
  let passwd: PasswdEntry[] = [];
  try {
    passwd = await passwdEntries(ctx);
  } catch {
    // members by /etc/group only
  }
  for (const { principal, rule } of rules) {
    add(principal, rule);
    if (principal.startsWith('%') && !principal.startsWith('%#')) {
      const group = groups.find((g) => g.name === principal.slice(1));
      if (!group) continue;
      const members = new Set([...group.members, ...passwd.filter((p) => p.gid === group.gid).map((p) => p.username)]);
      for (const member of members) add(member, `${rule} (via ${principal})`);
    }
  }
  const items = [...byUser.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([user, sudo_rules]) => ({ user, sudo_rules }));
  return unreadable.length ? { items, status: 'partial', reason: `not readable: ${unreadable.join(', ')}` } : { items };
}
