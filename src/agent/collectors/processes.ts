// /proc is read synchronously: its files live in memory, and a promise per read (three threadpool
// round trips each) cost more CPU than the reads themselves (issue 28's cycle budget).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ReportProcess } from '../report-schema.js';
import { Skip, type CollectContext, type CollectionResult } from '../context.js';
import { idNames } from './accounts.js';

/**
 * Processes from /proc (readable by any user unless /proc is mounted with hidepid). cpu_percent is
 * what ps reports: CPU time over the process's lifetime, so one pass needs no sampling delay.
 */

// Linux's USER_HZ and page size on every mainstream architecture (x86, arm64).
const CLOCK_TICKS = 100;
const PAGE_SIZE = 4096;
const MAX_PROCESSES = 20_000;
const MAX_CMDLINE = 4096;

const STATES: Record<string, string> = {
  R: 'running',
  S: 'sleeping',
  D: 'disk-sleep',
  Z: 'zombie',
  T: 'stopped',
  t: 'tracing-stop',
  X: 'dead',
  x: 'dead',
  I: 'idle',
  K: 'wakekill',
  W: 'waking',
  P: 'parked',
};

/** The fields of /proc/<pid>/stat after the command name (which may contain spaces and parentheses). */
export function parseStat(text: string): { comm: string; state: string; ppid: number; utime: number; stime: number; starttime: number; rss: number } | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3 (state); field n is rest[n - 3].
  return {
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: Number(rest[1]),
    utime: Number(rest[11]),
    stime: Number(rest[12]),
    starttime: Number(rest[19]),
    rss: Number(rest[21]),
  };
}

export function bootTime(ctx: CollectContext): Promise<number | null> {
  return ctx.memo('btime', async () => {
    const text = await ctx.readText('/proc/stat');
    const match = text ? /^btime\s+(\d+)/m.exec(text) : null;
    return match ? Number(match[1]) : null;
  });
}

/** socket inode → pid, for the sockets of processes whose fds this user may read. */
export function socketOwners(ctx: CollectContext): Promise<Map<string, { pid: number; name: string }>> {
  return ctx.memo('socket-owners', async () => {
    const owners = new Map<string, { pid: number; name: string }>();
    for (const pid of await pids(ctx)) {
      let fds: string[];
      try {
        fds = readdirSync(ctx.path(`/proc/${pid}/fd`));
      } catch {
        continue;
      }
      let name: string | null = null;
      for (const fd of fds) {
        let target: string;
        try {
          target = readlinkSync(ctx.path(`/proc/${pid}/fd/${fd}`));
        } catch {
          continue;
        }
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (!match) continue;
        if (name === null) name = (await ctx.readText(`/proc/${pid}/comm`))?.trim() ?? '';
        if (!owners.has(match[1]!)) owners.set(match[1]!, { pid, name });
      }
    }
    return owners;
  });
}

export function pids(ctx: CollectContext): Promise<number[]> {
  return ctx.memo('pids', async () => {
    try {
      return readdirSync(ctx.path('/proc'))
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .sort((a, b) => a - b);
    } catch {
      throw new Skip('/proc is not readable');
    }
  });
}

export async function collectProcesses(ctx: CollectContext): Promise<CollectionResult<ReportProcess>> {
  const all = await pids(ctx);
  const boot = await bootTime(ctx);
  const uptime = Number(((await ctx.readText('/proc/uptime')) ?? '').split(' ')[0]);
  const { users } = await idNames(ctx);
  const items: ReportProcess[] = [];
  let vanished = 0;
  for (const pid of all.slice(0, MAX_PROCESSES)) {
    let statText: string;
    let statusText: string;
    let cmdline: Buffer;
    try {
      statText = readFileSync(ctx.path(`/proc/${pid}/stat`), 'utf8');
      statusText = readFileSync(ctx.path(`/proc/${pid}/status`), 'utf8');
      cmdline = readFileSync(ctx.path(`/proc/${pid}/cmdline`));
    } catch {
      vanished++; // exited while we looked
      continue;
    }
    const stat = parseStat(statText);
    if (!stat) continue;
    const uid = Number(/^Uid:\s+(\d+)/m.exec(statusText)?.[1] ?? NaN);
    const startedSeconds = stat.starttime / CLOCK_TICKS;
    const elapsed = Number.isFinite(uptime) ? uptime - startedSeconds : NaN;
    const cpuSeconds = (stat.utime + stat.stime) / CLOCK_TICKS;
    const cpu = elapsed > 0 ? Math.round((1000 * cpuSeconds) / elapsed) / 10 : 0;
    const args = cmdline.toString('utf8').replace(/\0+$/, '').split('\0').join(' ');
    items.push({
      pid,
      name: stat.comm.slice(0, 256),
      user: Number.isFinite(uid) ? (users.get(uid) ?? String(uid)) : null,
      cmdline: (args || `[${stat.comm}]`).slice(0, MAX_CMDLINE),
      cpu_percent: Math.max(0, cpu),
      memory_mb: Math.round(((stat.rss * PAGE_SIZE) / 1024 / 1024) * 10) / 10,
      status: STATES[stat.state] ?? stat.state,
      parent_pid: Number.isFinite(stat.ppid) ? stat.ppid : null,
      start_time: boot !== null ? new Date((boot + startedSeconds) * 1000).toISOString() : null,
    });
  }
  const notes: string[] = [];
  if (all.length > MAX_PROCESSES) notes.push(`${all.length - MAX_PROCESSES} processes beyond ${MAX_PROCESSES} left out`);
  if (vanished) notes.push(`${vanished} exited while being read`);
  return { items, status: all.length > MAX_PROCESSES ? 'partial' : 'ok', reason: notes.length ? notes.join('; ') : null };
}
