import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { CollectionName, ReportCollector } from './report-schema.js';
import { createContext, type CollectorTable } from './context.js';
import { runCycle } from './cycle.js';
import { hostFacts } from './host.js';
import { DEFAULT_RETRY, flush, type FlushResult, type RetryPolicy, type Target } from './sender.js';
import { sleep } from './sleep.js';
import { DEFAULT_SPOOL_LIMITS, Spool, type SpoolLimits } from './spool.js';
import { AgentState } from './state.js';

const gzipAsync = promisify(gzip);

/**
 * The agent loop: one scan cycle at start and then every interval (measured from the start of the
 * previous cycle; a cycle that overruns is followed at once, never overlapped). Each cycle collects,
 * spools the gzip report, then sends the spool's backlog oldest first. `once` runs a single cycle.
 */

export interface AgentOptions {
  server: string;
  apiKey: string;
  agentVersion: string;
  stateDir: string;
  intervalMs: number;
  once: boolean;
  agentId?: string;
  region?: string | null;
  root?: string;
  fimPaths?: string[];
  defaultFim?: boolean;
  disabled?: ReadonlySet<CollectionName>;
  collectors?: CollectorTable;
  retry?: RetryPolicy;
  spoolLimits?: SpoolLimits;
  requestTimeoutMs?: number;
  /** Stops the loop (SIGTERM/SIGINT); a running cycle finishes spooling first. */
  signal?: AbortSignal;
  /** Human-readable progress lines (stderr in the CLI). */
  log: (line: string) => void;
}

export interface CycleSummary {
  agent_id: string;
  scan_id: string;
  scanned_at: string;
  node_id: string | null;
  /** This cycle's report reached the server (200). */
  delivered: boolean;
  server_response: Record<string, unknown> | null;
  spool: { delivered: number; rejected: number; pending: number; dropped: number };
  stopped: FlushResult['stopped'];
  collectors: Record<string, { status: string; reason: string | null; items: number; duration_ms: number }>;
  report_bytes: { raw: number; gzip: number };
  duration_ms: number;
  /** CPU of this cycle (collect, compress, spool, send). */
  cpu_ms: number;
  /** CPU of the whole process so far (start-up included): for --once, what the run cost. */
  process_cpu_ms: number;
  max_rss_mb: number;
}

function describeCollectors(collectors: ReportCollector[], log: (line: string) => void): void {
  for (const c of collectors) {
    if (c.status === 'ok') continue;
    log(`collector ${c.name}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`);
  }
}

/** Prepares the state directory and the spool; returns the agent id (given, kept, or made). */
export async function prepare(options: Pick<AgentOptions, 'stateDir' | 'agentId' | 'root' | 'spoolLimits'>) {
  const state = new AgentState(options.stateDir);
  await state.init();
  const spool = new Spool(`${options.stateDir}/spool`, options.spoolLimits ?? DEFAULT_SPOOL_LIMITS);
  await spool.init();
  let agentId = options.agentId;
  if (!agentId) {
    const facts = await hostFacts(createContext({ root: options.root }), { fallbackId: () => state.fallbackMachineId() });
    agentId = await state.agentId(facts.host.hostname, facts.host.machine_id);
  }
  return { state, spool, agentId };
}

export async function runOneCycle(options: AgentOptions, prepared: Awaited<ReturnType<typeof prepare>>): Promise<CycleSummary> {
  const { state, spool, agentId } = prepared;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const cycle = await runCycle({
    agentId,
    agentVersion: options.agentVersion,
    root: options.root,
    fimPaths: options.fimPaths,
    defaultFim: options.defaultFim,
    region: options.region,
    disabled: options.disabled,
    collectors: options.collectors,
    fallbackId: () => state.fallbackMachineId(),
  });
  const { report } = cycle;
  describeCollectors(report.collectors, options.log);
  const raw = Buffer.from(JSON.stringify(report));
  const gz = await gzipAsync(raw);
  const { dropped } = await spool.put(new Date(report.scanned_at), report.scan_id, gz);
  for (const d of dropped) options.log(`spool full: dropped the report scanned at ${d.scannedAt.toISOString()} (${d.scanId})`);

  let response: Record<string, unknown> | null = null;
  const target: Target = { server: options.server, apiKey: options.apiKey, agentId, userAgent: `controlgraph-agent/${options.agentVersion}` };
  const result = await flush(spool, target, {
    policy: options.retry ?? DEFAULT_RETRY,
    timeoutMs: options.requestTimeoutMs,
    signal: options.signal,
    events: {
      delivered(entry, body) {
        if (entry.scanId === report.scan_id) response = body;
        else options.log(`sent the spooled report scanned at ${entry.scannedAt.toISOString()}`);
        if (body.ignored) options.log(`server ignored the report scanned at ${entry.scannedAt.toISOString()}: ${String(body.message ?? body.reason)}`);
      },
      retrying(entry, outcome, delay) {
        options.log(`send failed (${outcome.message}); retrying in ${Math.round(delay / 1000)} s`);
      },
      rejected(entry, outcome) {
        options.log(`server refused the report scanned at ${entry.scannedAt.toISOString()} (${outcome.message}); moved to ${spool.rejectedDir}`);
      },
    },
  });
  if (result.stopped) {
    const what = result.stopped.kind === 'fatal' ? 'the server refused the agent' : 'the server is not reachable';
    options.log(`${what}: ${result.stopped.message}; ${result.pending} report(s) kept in the spool for the next cycle`);
  }
  const cpu = process.cpuUsage(cpu0);
  const total = process.cpuUsage();
  const delivered = response !== null;
  const serverResponse = response as Record<string, unknown> | null;
  return {
    agent_id: agentId,
    scan_id: report.scan_id,
    scanned_at: report.scanned_at,
    node_id: typeof serverResponse?.node_id === 'string' ? serverResponse.node_id : null,
    delivered,
    server_response: serverResponse,
    spool: { delivered: result.delivered, rejected: result.rejected, pending: result.pending, dropped: dropped.length },
    stopped: result.stopped,
    collectors: Object.fromEntries(report.collectors.map((c) => [c.name, { status: c.status, reason: c.reason, items: c.items, duration_ms: c.duration_ms }])),
    report_bytes: { raw: raw.length, gzip: gz.length },
    duration_ms: Math.round(performance.now() - t0),
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    process_cpu_ms: Math.round((total.user + total.system) / 1000),
    max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

/**
 * Runs the agent. With `once`: one cycle, and the summary. Otherwise cycles until the signal aborts;
 * `onCycle` sees each summary.
 */
export async function runAgent(options: AgentOptions, onCycle?: (summary: CycleSummary) => void): Promise<CycleSummary | null> {
  const prepared = await prepare(options);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  options.log(
    `agent ${prepared.agentId} ${options.agentVersion}: sending to ${options.server}, state in ${options.stateDir}` +
      (uid !== null && uid !== 0 ? ` (running as uid ${uid}, not root: what it cannot read is reported as skipped or partial)` : ''),
  );
  let last: CycleSummary | null = null;
  while (!options.signal?.aborted) {
    const started = performance.now();
    if (options.once) {
      last = await runOneCycle(options, prepared);
      onCycle?.(last);
      break;
    }
    try {
      last = await runOneCycle(options, prepared);
      onCycle?.(last);
    } catch (error) {
      // A long-running agent outlives a full disk or a vanished state directory: it says so and
      // tries again next cycle instead of exiting.
      options.log(`cycle failed: ${(error as Error).message}; next cycle in ${Math.round(options.intervalMs / 1000)} s`);
    }
    // A cycle that overran the interval is followed at once by the next.
    const pause = options.intervalMs - (performance.now() - started);
    if (pause > 0) await sleep(pause, options.signal);
  }
  return last;
}
