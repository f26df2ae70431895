import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { itemChecks } from './item-checks.js';
import { COLLECTIONS, REPORT_SCHEMA_VERSION, type AgentReport, type CollectionName, type ReportCollector } from './report-schema.js';
import { createContext, Skip, type CollectorTable } from './context.js';
import { platformCollectors } from './collectors/index.js';
import { hostFacts } from './host.js';

/**
 * One scan cycle: every enabled collector runs in parallel (they share memoised reads through the
 * context), each bounded by a timeout, and the results become one report. A collector that throws
 * never spoils the others: its collection is left out and `collectors[]` says why.
 *
 * Items are checked against the report schema before they go in: the server refuses a whole report
 * for one bad value (400), and a report the server refuses is lost, so an item this agent cannot
 * describe within the schema (an absurdly long name, say) is dropped here and counted instead.
 */

export interface CycleOptions {
  agentId: string;
  agentVersion: string;
  /** Host root; `/` unless the agent reads a mounted host (a container). */
  root?: string;
  fimPaths?: string[];
  defaultFim?: boolean;
  region?: string | null;
  /** Collections not to collect (reported as skipped). */
  disabled?: ReadonlySet<CollectionName>;
  collectors?: CollectorTable;
  collectorTimeoutMs?: number;
  /** Machine id for hosts without /etc/machine-id (kept by the caller across runs). */
  fallbackId: () => Promise<string>;
  now?: () => Date;
}

export interface CycleResult {
  report: AgentReport;
  machineIdSource: string;
  durationMs: number;
}

let checkers: Map<CollectionName, ValidateFunction> | null = null;
function checker(name: CollectionName): ValidateFunction {
  checkers ??= itemChecks();
  return checkers.get(name)!;
}

/** Keeps the items that fit the report schema; says what was dropped and why (first error only). */
export function conforming(name: CollectionName, items: unknown[]): { kept: unknown[]; dropped: number; example: string | null } {
  const check = checker(name);
  const kept: unknown[] = [];
  let dropped = 0;
  let example: string | null = null;
  for (const item of items) {
    if (check(item)) {
      kept.push(item);
      continue;
    }
    dropped++;
    if (!example) {
      const first = check.errors?.[0];
      example = first ? `${first.instancePath || '/'} ${first.message}` : 'does not match the schema';
    }
  }
  return { kept, dropped, example };
}

const MAX_REASON = 2000;
const clip = (text: string) => (text.length > MAX_REASON ? `${text.slice(0, MAX_REASON - 1)}…` : text);

function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function runCycle(options: CycleOptions): Promise<CycleResult> {
  const now = options.now ?? (() => new Date());
  const started = now();
  const t0 = performance.now();
  const ctx = createContext({ root: options.root, now: started, fimPaths: options.fimPaths, defaultFim: options.defaultFim });
  const table = options.collectors ?? platformCollectors();
  const timeoutMs = options.collectorTimeoutMs ?? 120_000;

  const [facts, results] = await Promise.all([
    hostFacts(ctx, { region: options.region ?? null, fallbackId: options.fallbackId }),
    Promise.all(
      COLLECTIONS.map(async (name): Promise<{ entry: ReportCollector; items: unknown[] | null }> => {
        const begin = performance.now();
        const done = (status: ReportCollector['status'], reason: string | null, items: unknown[] | null) => ({
          entry: { name, status, reason: reason === null ? null : clip(reason), items: items?.length ?? 0, duration_ms: Math.round(performance.now() - begin) },
          items,
        });
        if (options.disabled?.has(name)) return done('skipped', 'disabled in the agent configuration (--disable)', null);
        const collector = table[name];
        if (!collector) return done('unsupported', 'no collector for this collection on this platform', null);
        try {
          const result = await withTimeout(collector(ctx), timeoutMs, name);
          const { kept, dropped, example } = conforming(name, result.items);
          const notes = [result.reason, dropped ? `${dropped} item(s) left out that do not fit the report format (e.g. ${example})` : null].filter(Boolean);
          const status = dropped ? 'partial' : (result.status ?? 'ok');
          return done(status, notes.length ? notes.join('; ') : null, kept);
        } catch (error) {
          if (error instanceof Skip) return done(error.status, error.message, null);
          return done('failed', (error as Error).message || String(error), null);
        }
      }),
    ),
  ]);

  const report: AgentReport = {
    schema_version: REPORT_SCHEMA_VERSION,
    agent_id: options.agentId,
    agent_version: options.agentVersion,
    scan_id: randomUUID(),
    scanned_at: started.toISOString(),
    host: facts.host,
    os: facts.os,
    collectors: results.map((r) => r.entry),
  };
  COLLECTIONS.forEach((name, i) => {
    const items = results[i]!.items;
    if (items) (report as unknown as Record<string, unknown>)[name] = items;
  });
  return { report, machineIdSource: facts.machineIdSource, durationMs: Math.round(performance.now() - t0) };
}
