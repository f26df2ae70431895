import { isAbsolute } from 'node:path';
import { parseDuration } from '../platform/duration.js';
import { VERSION } from '../version.js';
import { runAgent, type AgentOptions, type CycleSummary } from '../agent/agent.js';
import { runCycle } from '../agent/cycle.js';
import { AGENT_ID, AgentState, defaultStateDir } from '../agent/state.js';
import { COLLECTIONS, type CollectionName } from '../modules/agents/report-schema.js';

export const agentHelp = `Usage: controlgraph agent --server URL --api-key KEY [--interval 5m] [--once] [--fim PATH…] [options]

Runs the host agent: scans this Linux host every cycle and sends the report to the server.

Every enabled collector reads the host in parallel each cycle (packages from the dpkg/rpm/apk databases, processes and sockets from /proc, users and groups, password status
from /etc/shadow (never the hashes), sudoers, the firewall (iptables-save, nft), systemd units,
network interfaces, SHA-256 of monitored files), and the gzip-compressed report is sent to
POST /api/v1/agents/{agentID}/report. Every report is spooled before it is sent and removed when the
server has it, so a server outage loses no report: the next cycle sends the backlog, oldest first.
Runs unprivileged; what it cannot read is reported as skipped or partial, with the reason.

  --server URL          Base URL of the ControlGraph service (e.g. https://controlgraph.example.com).
  --api-key KEY         API key with agents:write (or set CONTROLGRAPH_AGENT_API_KEY, which keeps the
                        key out of the process list).
  --interval DURATION   Time between scan cycles: 30s, 5m, 1h (default 5m, at least 10s).
  --once                Run one cycle, print its summary as JSON and exit: 0 when the report was
                        delivered, 1 when it stays in the spool (server unreachable or refusing).
  --fim PATH…           Monitor these files (directories: their files, 4 levels deep) besides the
                        built-in list of sensitive files; repeat or list several after one --fim.
  --no-default-fim      Monitor only the --fim paths.
  --disable NAME[,…]    Collections not to collect: ${COLLECTIONS.join(', ')}.
  --agent-id ID         Agent id (default: kept in the state directory, <hostname>-<machine hash>).
  --region REGION       Region part of the host node id host:<region>:host.os.instance:<id> (default local).
  --state-dir DIR       Spool and agent id (default /var/lib/controlgraph-agent as root, else
                        $XDG_STATE_HOME/controlgraph-agent or ~/.local/state/controlgraph-agent).
  --root DIR            Read a host mounted at DIR (e.g. from a container); systemctl, iptables-save
                        and nft describe only the agent's own system, so they run only when DIR is /.
  --retries N           Send attempts after the first, per report and cycle (default 4, backoff from 2 s).
  --dry-run             Collect once and print the report as JSON; send nothing (no --server needed).`;

export interface ParsedAgentArgs {
  server: string | null;
  apiKey: string | null;
  intervalMs: number;
  once: boolean;
  dryRun: boolean;
  fim: string[];
  defaultFim: boolean;
  disabled: Set<CollectionName>;
  agentId: string | null;
  region: string | null;
  stateDir: string | null;
  root: string;
  retries: number;
}

const VALUE_OPTIONS = ['server', 'api-key', 'interval', 'disable', 'agent-id', 'region', 'state-dir', 'root', 'retries'];
const FLAGS = ['once', 'dry-run', 'no-default-fim'];

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses the agent's arguments; --fim takes every following argument up to the next option. */
export function parseAgentArgs(args: string[], env: NodeJS.ProcessEnv = process.env): ParsedAgentArgs {
  const values: Record<string, string> = {};
  const flags = new Set<string>();
  const fim: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (name === 'fim') {
      if (inline !== undefined) fim.push(inline);
      let taken = inline !== undefined ? 1 : 0;
      while (i + 1 < args.length && !args[i + 1]!.startsWith('--')) {
        fim.push(args[++i]!);
        taken++;
      }
      if (taken === 0) throw new UsageError('--fim needs at least one path');
    } else if (FLAGS.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
    } else if (VALUE_OPTIONS.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
      values[name] = value;
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  const dryRun = flags.has('dry-run');
  const server = values.server ?? null;
  const apiKey = values['api-key'] ?? env.CONTROLGRAPH_AGENT_API_KEY ?? null;
  if (!dryRun) {
    if (!server) throw new UsageError('--server is required');
    if (!apiKey) throw new UsageError('--api-key is required (or set CONTROLGRAPH_AGENT_API_KEY)');
  }
  if (server) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new UsageError(`--server "${server}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server must be an http:// or https:// URL (got ${url.protocol})`);
  }
  let intervalMs = 5 * 60_000;
  if (values.interval !== undefined) {
    try {
      intervalMs = parseDuration(values.interval, '--interval');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    if (intervalMs < 10_000) throw new UsageError('--interval must be at least 10s');
  }
  const disabled = new Set<CollectionName>();
  for (const name of (values.disable ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(COLLECTIONS as readonly string[]).includes(name)) throw new UsageError(`--disable: unknown collection "${name}" (known: ${COLLECTIONS.join(', ')})`);
    disabled.add(name as CollectionName);
  }
  if (values['agent-id'] !== undefined && !AGENT_ID.test(values['agent-id'])) {
    throw new UsageError('--agent-id must be 1-128 characters of letters, digits, ".", "_" and "-", starting with a letter or digit');
  }
  if (values.region !== undefined && !/^[a-z0-9][a-z0-9-]{0,63}$/.test(values.region)) throw new UsageError('--region must be lower-case letters, digits and "-"');
  const root = values.root ?? '/';
  if (!isAbsolute(root)) throw new UsageError('--root must be an absolute path');
  let retries = 4;
  if (values.retries !== undefined) {
    if (!/^\d+$/.test(values.retries) || Number(values.retries) > 100) throw new UsageError('--retries must be a whole number from 0 to 100');
    retries = Number(values.retries);
  }
  for (const p of fim) if (!isAbsolute(p)) throw new UsageError(`--fim paths must be absolute (got "${p}")`);
  return {
    server,
    apiKey,
    intervalMs,
    once: flags.has('once'),
    dryRun,
    fim,
    defaultFim: !flags.has('no-default-fim'),
    disabled,
    agentId: values['agent-id'] ?? null,
    region: values.region ?? null,
    stateDir: values['state-dir'] ?? null,
    root,
    retries,
  };
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} controlgraph-agent: ${line}\n`);

function cycleLine(s: CycleSummary): string {
  const states = Object.values(s.collectors).reduce<Record<string, number>>((acc, c) => ({ ...acc, [c.status]: (acc[c.status] ?? 0) + 1 }), {});
  const findings = (s.server_response?.findings ?? null) as Record<string, number> | null;
  return (
    `cycle ${s.scan_id}: ${s.delivered ? `delivered${s.node_id ? ` (${s.node_id})` : ''}` : 'kept in the spool'}; ` +
    `collectors ${Object.entries(states).map(([k, n]) => `${n} ${k}`).join(', ')}; ` +
    (findings ? `findings created ${findings.created}, resolved ${findings.resolved}; ` : '') +
    `${s.report_bytes.gzip} bytes gzip, ${s.duration_ms} ms, cpu ${s.cpu_ms} ms, peak rss ${s.max_rss_mb} MiB`
  );
}

export async function agentCommand(args: string[]): Promise<void> {
  let parsed: ParsedAgentArgs;
  try {
    parsed = parseAgentArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${agentHelp}`);
    process.exitCode = 2;
    return;
  }
  const stateDir = parsed.stateDir ?? defaultStateDir();

  if (parsed.dryRun) {
    const state = new AgentState(stateDir);
    const { report } = await runCycle({
      agentId: parsed.agentId ?? 'dry-run',
      agentVersion: VERSION,
      root: parsed.root,
      fimPaths: parsed.fim,
      defaultFim: parsed.defaultFim,
      region: parsed.region,
      disabled: parsed.disabled,
      fallbackId: async () => {
        await state.init();
        return state.fallbackMachineId();
      },
    });
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }

  const controller = new AbortController();
  const stop = () => {
    log('stopping after the current cycle');
    controller.abort();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const options: AgentOptions = {
    server: parsed.server!,
    apiKey: parsed.apiKey!,
    agentVersion: VERSION,
    stateDir,
    intervalMs: parsed.intervalMs,
    once: parsed.once,
    agentId: parsed.agentId ?? undefined,
    region: parsed.region,
    root: parsed.root,
    fimPaths: parsed.fim,
    defaultFim: parsed.defaultFim,
    disabled: parsed.disabled,
    retry: { retries: parsed.retries, baseDelayMs: 2_000, maxDelayMs: 60_000 },
    signal: controller.signal,
    log,
  };
  try {
    const last = await runAgent(options, (summary) => log(cycleLine(summary)));
    if (parsed.once && last) {
      process.stdout.write(`${JSON.stringify(last, null, 2)}\n`);
      if (!last.delivered) process.exitCode = 1;
    }
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
