import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { runAgent, type AgentOptions, type CycleSummary } from './agent.js';
import { readApiKeyFile } from './api-key.js';
import { configToArgs } from './config-file.js';
import { runCycle } from './cycle.js';
import { COLLECTIONS, type CollectionName } from './report-schema.js';
import { DEFAULT_SPOOL_LIMITS } from './spool.js';
import { AGENT_ID, AgentState, defaultStateDir } from './state.js';
import { UsageError } from './usage-error.js';

/**
 * The agent's command line, shared by `controlgraph agent` (a checkout of the service) and the
 * standalone `controlgraph-agent` executable (src/agent/main.ts). Everything here and below is the
 * agent's own code: the executable is built from src/agent alone.
 */

export const agentHelp = (program = 'controlgraph agent') => `Usage: ${program} --server URL --api-key-file FILE [--interval 5m] [--once] [--fim PATH…] [options]
       ${program} --config /etc/controlgraph-agent/agent.conf [options]

Runs the host agent: scans this Linux host every cycle and sends the report to the server.

Every enabled collector reads the host in parallel each cycle (packages from the dpkg/rpm/apk databases, processes and sockets from /proc, users and groups, password status
from /etc/shadow (never the hashes), sudoers, the firewall (iptables-save, nft), systemd units,
network interfaces, SHA-256 of monitored files), and the gzip-compressed report is sent to
POST /api/v1/agents/{agentID}/report. Every report is spooled before it is sent and removed when the
server has it, so a server outage loses no report: the next cycle sends the backlog, oldest first.
Runs unprivileged; what it cannot read is reported as skipped or partial, with the reason.

  --config FILE         Read these options from FILE ("key = value" lines: server, api_key_file,
                        interval, collectors, disable, fim, default_fim, state_dir, region, root,
                        retries, spool_max_mb, spool_max_age, agent_id); options given here win.
  --server URL          Base URL of the ControlGraph service (e.g. https://controlgraph.example.com).
  --api-key-file FILE   File holding the API key (agents:write). It must not be readable by group or
                        others (chmod 600): a readable one is refused (exit 2). Or set
                        CONTROLGRAPH_AGENT_API_KEY. The key is never taken on the command line,
                        where every user of the host sees it in the process list.
  --interval DURATION   Time between scan cycles: 30s, 5m, 1h (default 5m, at least 10s).
  --once                Run one cycle, print its summary as JSON and exit: 0 when the report was
                        delivered, 1 when it stays in the spool (server unreachable or refusing).
  --fim PATH…           Monitor these files (directories: their files, 4 levels deep) besides the
                        built-in list of sensitive files; repeat or list several after one --fim.
  --no-default-fim      Monitor only the --fim paths.
  --collectors NAME[,…] Collect only these collections (default: all).
  --disable NAME[,…]    Collections not to collect: ${COLLECTIONS.join(', ')}.
  --agent-id ID         Agent id (default: kept in the state directory, <hostname>-<machine hash>).
  --region REGION       Region part of the host node id host:<region>:host.os.instance:<id> (default local).
  --state-dir DIR       Spool and agent id (default /var/lib/controlgraph-agent as root, else
                        $XDG_STATE_HOME/controlgraph-agent or ~/.local/state/controlgraph-agent).
  --spool-max-mb N      Spool bound in MiB (default ${DEFAULT_SPOOL_LIMITS.maxBytes / 1024 / 1024}); past it the oldest reports go.
  --spool-max-age DUR   Spooled reports older than this are dropped unsent (default ${DEFAULT_SPOOL_LIMITS.maxAgeMs / 86_400_000}d).
  --root DIR            Read a host mounted at DIR (e.g. from a container); systemctl, iptables-save
                        and nft describe only the agent's own system, so they run only when DIR is /.
  --retries N           Send attempts after the first, per report and cycle (default 4, backoff from 2 s).
  --dry-run             Collect once and print the report as JSON; send nothing (no --server needed).
  --version             Print the version (and, for a built agent, the SHA-256 of the executable).`;

export interface ParsedAgentArgs {
  server: string | null;
  /** From the environment; the key file is read later (readApiKeyFile checks its permissions). */
  apiKey: string | null;
  apiKeyFile: string | null;
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
  spoolMaxBytes: number;
  spoolMaxAgeMs: number;
}

const VALUE_OPTIONS = [
  'server',
  'api-key-file',
  'interval',
  'collectors',
  'disable',
  'agent-id',
  'region',
  'state-dir',
  'root',
  'retries',
  'spool-max-mb',
  'spool-max-age',
  'config',
];
const FLAGS = ['once', 'dry-run', 'no-default-fim', 'version'];

export { UsageError };

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Durations as the service writes them: `<n>s`, `<n>m`, `<n>h` or `<n>d`. */
export function parseAgentDuration(text: string, name: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) throw new UsageError(`${name}: "${text}" is not a duration like 30s, 5m, 1h or 7d`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

function collectionList(text: string, option: string): Set<CollectionName> {
  const out = new Set<CollectionName>();
  for (const name of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(COLLECTIONS as readonly string[]).includes(name)) throw new UsageError(`--${option}: unknown collection "${name}" (known: ${COLLECTIONS.join(', ')})`);
    out.add(name as CollectionName);
  }
  return out;
}

/**
 * Parses the agent's arguments; --fim takes every following argument up to the next option. A later
 * value of an option replaces an earlier one (the configuration file's options come first).
 */
export function parseAgentArgs(args: string[], env: NodeJS.ProcessEnv = process.env): ParsedAgentArgs {
  const values: Record<string, string> = {};
  const flags = new Set<string>();
  const fim: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (name === 'api-key') {
      throw new UsageError(
        '--api-key is not accepted: a key on the command line is visible to every user of the host in the process list; ' +
          'put it in a file only the agent can read (--api-key-file FILE, chmod 600) or in CONTROLGRAPH_AGENT_API_KEY',
      );
    }
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
  const apiKeyFile = values['api-key-file'] ?? null;
  const apiKey = apiKeyFile ? null : env.CONTROLGRAPH_AGENT_API_KEY || null;
  if (!dryRun && !flags.has('version')) {
    if (!server) throw new UsageError('--server is required');
    if (!apiKey && !apiKeyFile) throw new UsageError('--api-key-file is required (or set CONTROLGRAPH_AGENT_API_KEY)');
  }
  if (apiKeyFile && !isAbsolute(apiKeyFile)) throw new UsageError(`--api-key-file must be an absolute path (got "${apiKeyFile}")`);
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
    intervalMs = parseAgentDuration(values.interval, '--interval');
    if (intervalMs < 10_000) throw new UsageError('--interval must be at least 10s');
  }
  const disabled = collectionList(values.disable ?? '', 'disable');
  if (values.collectors !== undefined && values.collectors.trim() !== 'all') {
    const enabled = collectionList(values.collectors, 'collectors');
    for (const name of COLLECTIONS) if (!enabled.has(name)) disabled.add(name);
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
  let spoolMaxBytes = DEFAULT_SPOOL_LIMITS.maxBytes;
  if (values['spool-max-mb'] !== undefined) {
    if (!/^\d+$/.test(values['spool-max-mb']) || Number(values['spool-max-mb']) < 1) throw new UsageError('--spool-max-mb must be a whole number of MiB, at least 1');
    spoolMaxBytes = Number(values['spool-max-mb']) * 1024 * 1024;
  }
  let spoolMaxAgeMs = DEFAULT_SPOOL_LIMITS.maxAgeMs;
  if (values['spool-max-age'] !== undefined) {
    spoolMaxAgeMs = parseAgentDuration(values['spool-max-age'], '--spool-max-age');
    if (spoolMaxAgeMs < 3_600_000) throw new UsageError('--spool-max-age must be at least 1h');
  }
  for (const p of fim) if (!isAbsolute(p)) throw new UsageError(`--fim paths must be absolute (got "${p}")`);
  return {
    server,
    apiKey,
    apiKeyFile,
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
    spoolMaxBytes,
    spoolMaxAgeMs,
  };
}

/** The arguments with a `--config FILE` replaced by the file's options (placed first, so the command line wins). */
export async function expandConfig(args: string[]): Promise<string[]> {
  const i = args.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return args;
  const inline = args[i]!.startsWith('--config=') ? args[i]!.slice('--config='.length) : undefined;
  const path = inline ?? args[i + 1];
  if (!path || path.startsWith('--')) throw new UsageError('--config needs a value');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the configuration ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const rest = [...args.slice(0, i), ...args.slice(i + (inline !== undefined ? 1 : 2))];
  return [...configToArgs(text, path), ...rest];
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} controlgraph-agent: ${line}\n`);

function cycleLine(s: CycleSummary): string {
  const states = Object.values(s.collectors).reduce<Record<string, number>>((acc, c) => ({ ...acc, [c.status]: (acc[c.status] ?? 0) + 1 }), {});
  const findings = (s.server_response?.findings ?? null) as Record<string, number> | null;
  return (
    `cycle ${s.scan_id}: ${s.delivered ? `delivered${s.node_id ? ` (${s.node_id})` : ''}` : 'kept in the spool'}; ` +
    `collectors ${Object.entries(states)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}; ` +
    (findings ? `findings created ${findings.created}, resolved ${findings.resolved}; ` : '') +
    `${s.report_bytes.gzip} bytes gzip, ${s.duration_ms} ms, cpu ${s.cpu_ms} ms, peak rss ${s.max_rss_mb} MiB`
  );
}

export interface AgentProgram {
  /** How the usage names the command: `controlgraph agent` or `controlgraph-agent`. */
  name: string;
  version: string;
  /** The `--version` line. */
  versionLine: () => Promise<string>;
}

export async function agentCommand(rawArgs: string[], program: AgentProgram): Promise<void> {
  let parsed: ParsedAgentArgs;
  let apiKey: string | null;
  try {
    parsed = parseAgentArgs(await expandConfig(rawArgs));
    if (parsed.apiKeyFile && !parsed.dryRun) apiKey = await readApiKeyFile(parsed.apiKeyFile);
    else apiKey = parsed.apiKey;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${agentHelp(program.name)}`);
    process.exitCode = 2;
    return;
  }
  if (rawArgs.includes('--version')) {
    console.log(await program.versionLine());
    return;
  }
  const stateDir = parsed.stateDir ?? defaultStateDir();

  if (parsed.dryRun) {
    const state = new AgentState(stateDir);
    const { report } = await runCycle({
      agentId: parsed.agentId ?? 'dry-run',
      agentVersion: program.version,
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
    apiKey: apiKey!,
    agentVersion: program.version,
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
    spoolLimits: { ...DEFAULT_SPOOL_LIMITS, maxBytes: parsed.spoolMaxBytes, maxAgeMs: parsed.spoolMaxAgeMs },
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
