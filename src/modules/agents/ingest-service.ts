import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../platform/db/scope.js';
import { emitEvents, type NewEvent } from '../../platform/events/outbox.js';
import { badRequest, conflict } from '../../platform/http/errors.js';
import { requestAudit } from '../compliance/index.js';
import { allRules } from '../compliance/index.js';
import { enabledFrameworks } from '../compliance/index.js';
import { diffFile, driftFinding, fileState, mergeDrift, type FileChange, type FileState } from './drift.js';
import { addCounts, emptyCounts, syncFindings, type HostResource, type SyncCounts } from '../compliance/index.js';
import { HOST_NODE_TYPE, hostNodeId, hostProperties, hostRegion, linkCloudInstance, upsertHostNode, type NodeChange } from './host-node.js';
import { evaluateRule, hostRules, type RuleOutcome } from './host-rules.js';
import { replaceResourceUnknowns } from '../compliance/index.js';
import { diffPackages, matchCache, readFiles, readPackages, withMatches, writeCollections, writeFiles, writePackages, type StoredPackage } from './inventory-repo.js';
import { matchKey, matchPackages, normalisePackages, osFacts, packagesDigest, type HostPackage, type MatchResult } from './packages.js';
import { ecosystemOf, type OsFacts } from './package-identity.js';
import { COLLECTIONS, type AgentReport, type CollectionName } from './report-schema.js';
import type { CollectorState } from './tables.js';
import { vulnerabilityFindings } from './vuln-findings.js';
import { matchingSourcesState, packageCoverage, type PackageCoverage } from '../vulndb/index.js';
import './tables.js';
import { nodeProperty } from '../graph/index.js';

/** Reports scanned further ahead of the server's clock are refused: they would lock out every later one. */
export const FUTURE_TOLERANCE_MS = 10 * 60_000;

export interface ReportSizes {
  compressed: number;
  raw: number;
}

export interface IngestResult {
  agent_id: string;
  node_id: string;
  scan_id: string;
  scanned_at: string;
  received_at: string;
  ignored: boolean;
  reason: string | null;
  message: string | null;
  node?: NodeChange;
  packages?: { total: number; added: number; updated: number; removed: number; vulnerable: number } | null;
  /** Whether the store could check this host's packages at all (null when the report has no packages). */
  package_matching?: PackageCoverage | null;
  findings?: SyncCounts & { open_vulnerable_packages: number; open_vulnerabilities: number; drifted_files: number };
  rules?: Array<{ id: string; state: RuleOutcome['state']; reason?: string }>;
  collectors?: Record<string, CollectorState>;
  sbom_version?: number;
  audit_run_id?: string | null;
}

const GATHERED: ReadonlySet<string> = new Set(['ok', 'partial']);

/** Per collection: what the agent said about it (a collection without an entry counts as collected). */
export function collectorStates(report: AgentReport): Record<CollectionName, CollectorState> {
  const states = {} as Record<CollectionName, CollectorState>;
  for (const name of COLLECTIONS) {
    const entry = report.collectors.find((c) => c.name === name);
    const items = (report[name] as unknown[] | undefined)?.length ?? 0;
    if (entry) states[name] = { status: entry.status, reason: entry.reason, items };
    else states[name] = report[name] ? { status: 'ok', reason: null, items } : { status: 'skipped', reason: 'not in the report', items: 0 };
  }
  return states;
}

/** Collections present in the report and collected well enough to judge. */
export function collectedSet(report: AgentReport, states = collectorStates(report)): Set<CollectionName> {
  return new Set(COLLECTIONS.filter((name) => report[name] !== undefined && GATHERED.has(states[name].status)));
}

/** The `host` variable of host rules: the report's facts, every collection, and what each collector said (`collectors`). */
function hostVariable(report: AgentReport, region: string, states: Record<CollectionName, CollectorState>): Record<string, unknown> {
  const host: Record<string, unknown> = {
    hostname: report.host.hostname,
    fqdn: report.host.fqdn ?? null,
    machine_id: report.host.machine_id,
    region,
    cloud: report.host.cloud ?? null,
    os: report.os,
    kernel: report.os.kernel,
    arch: report.os.arch,
    // A rule tells a setting left out from data the agent could not read by its collector's status.
    collectors: Object.fromEntries(COLLECTIONS.map((name) => [name, { status: states[name].status, reason: states[name].reason }])),
  };
  for (const name of COLLECTIONS) if (report[name] !== undefined) host[name] = report[name];
  return host;
}

type Deps = Pick<AppDeps, 'database' | 'clock' | 'log'>;
type HostRules = ReturnType<typeof hostRules>;
type HostRow = Selectable<Database['agent_hosts']>;

/** One report, as the steps of its transaction read it. */
interface ReportInput {
  context: RequestContext;
  scope: Scope;
  agentId: string;
  report: AgentReport;
  now: Date;
  scannedAt: Date;
  region: string;
  nodeId: string;
  states: Record<CollectionName, CollectorState>;
  collected: Set<CollectionName>;
  os: OsFacts;
  packages: HostPackage[] | null;
  /** The matches found before the transaction (null when the report has no packages). */
  pre: { state: string; matches: Map<string, MatchResult> } | null;
}

export function createIngestService(deps: Deps) {
  const db = deps.database.db;
  const rules = hostRules();

  function refuse(path: string, message: string): never {
    throw badRequest(`invalid body: ${path} ${message}`, { location: 'body', errors: [{ path, message }] });
  }

  async function checkOwner(trx: Kysely<Database>, scope: Scope, agentId: string) {
    const owner = await trx.selectFrom('agents').select(['tenant_id', 'workspace_id']).where('agent_id', '=', agentId).executeTakeFirst();
    if (!owner) return;
    if (owner.tenant_id !== scope.tenantId) throw conflict(`agent id "${agentId}" belongs to another tenant`);
    if (owner.workspace_id !== scope.workspaceId) throw conflict(`agent id "${agentId}" belongs to another workspace of this tenant`);
  }

  /**
   * Matching is read-only and the slow part (hundreds of ms for thousands of packages), so it runs
   * before the transaction, and only for packages whose answer is not stored already: an unchanged
   * inventory against an unchanged store needs no matching at all.
   */
  async function prematch(scope: Scope, nodeId: string, packages: HostPackage[], os: OsFacts) {
    const state = await matchingSourcesState(db);
    const before = await db.selectFrom('agent_hosts').select(['packages_digest', 'vuln_state']).where(inWorkspace(scope)).where('node_id', '=', nodeId).executeTakeFirst();
    if (before && before.vuln_state === state && before.packages_digest === packagesDigest(packages)) return { state, matches: new Map<string, MatchResult>() };
    const cache = before && before.vuln_state === state ? matchCache(await readPackages(db, scope, nodeId), (m) => ecosystemOf(m, os)) : new Map<string, MatchResult>();
    const missing = packages.filter((p) => p.ecosystem && !cache.has(matchKey(p)));
    const fresh = await matchPackages(db, missing);
    for (const [key, value] of fresh) cache.set(key, value);
    return { state, matches: cache };
  }

  /** The report's scan time, or a 400 for a report that is not this agent's or comes from the future. */
  function checkReport(agentId: string, report: AgentReport, now: Date): Date {
    if (report.agent_id !== agentId) refuse('/agent_id', `"${report.agent_id}" does not match the agent id of the path ("${agentId}")`);
    const scannedAt = new Date(report.scanned_at);
    if (Number.isNaN(scannedAt.getTime())) refuse('/scanned_at', 'is not a timestamp');
    if (scannedAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
      refuse('/scanned_at', `${scannedAt.toISOString()} is more than ${FUTURE_TOLERANCE_MS / 60_000} minutes ahead of the server's clock (${now.toISOString()})`);
    }
    return scannedAt;
  }

  async function ingest(context: RequestContext, agentId: string, report: AgentReport, sizes: ReportSizes): Promise<IngestResult> {
    const scope = context.scope;
    const now = deps.clock.now();
    const scannedAt = checkReport(agentId, report, now);
    const region = hostRegion(report);
    const nodeId = hostNodeId(region, report.host.machine_id);
    const states = collectorStates(report);
    const collected = collectedSet(report, states);
    const os = osFacts(report);
    const packages = collected.has('packages') ? normalisePackages(report.packages!, os) : null;

    await checkOwner(db, scope, agentId);
    const pre = packages ? await prematch(scope, nodeId, packages, os) : null;
    // Without advisories for the host's ecosystems, "0 vulnerable" would mean "not checked": say so.
    const coverage = packages
      ? await packageCoverage(
          db,
          packages.flatMap((p) => (p.ecosystem ? [p.ecosystem] : [])),
        )
      : null;
    const input: ReportInput = { context, scope, agentId, report, now, scannedAt, region, nodeId, states, collected, os, packages, pre };
    const base = { agent_id: agentId, node_id: nodeId, scan_id: report.scan_id, scanned_at: scannedAt.toISOString(), received_at: now.toISOString() };

    return db.transaction().execute(async (trx) => {
      await claimAgent(trx, deps, input);
      const agentUpdate = {
        last_seen_at: now,
        hostname: report.host.hostname,
        agent_version: report.agent_version,
        api_key_id: context.actor.type === 'api_key' ? context.actor.id : null,
      };

      // One report per host at a time, whichever agent sends it (the host row may not exist yet).
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`agent-host:${scope.workspaceId}:${nodeId}`}, 0))`.execute(trx);
      const host = await trx.selectFrom('agent_hosts').selectAll().where(inWorkspace(scope)).where('node_id', '=', nodeId).executeTakeFirst();
      const ignored = host ? ignoredReport(host, report, scannedAt) : null;
      if (host && ignored) {
        await logReport(trx, input, sizes, 'ignored', ignored.reason, { last_scanned_at: new Date(host.last_scanned_at).toISOString(), last_scan_id: host.last_scan_id });
        await trx
          .updateTable('agents')
          .set({ ...agentUpdate, reports_ignored: sql<number>`reports_ignored + 1` })
          .where('agent_id', '=', agentId)
          .execute();
        return { ...base, ignored: true, reason: ignored.reason, message: ignored.message };
      }

      const { resource, nodeChange } = await writeHostNode(trx, input);
      const { packageDiff, current } = await packageChanges(trx, input, host);
      const { changes, fileWrites } = await fileDrift(trx, input, host);
      const sbomVersion = await writeHost(trx, input, host, packageDiff, fileWrites);
      const { counts, events, vulnerable, vulnerabilities, outcomes } = await syncHostFindings(trx, rules, input, resource, host, current, changes);
      const auditRunId = await requestHostAudit(trx, deps, input, nodeChange);

      await emitEvents(trx, deps.clock, events);
      const packageSummary =
        packageDiff && current ? { total: current.length, added: packageDiff.added, updated: packageDiff.updated, removed: packageDiff.deletes.length, vulnerable } : null;
      const findings = { ...counts, open_vulnerable_packages: vulnerable, open_vulnerabilities: vulnerabilities, drifted_files: changes.length };
      await logReport(trx, input, sizes, 'processed', null, { node: nodeChange, packages: packageSummary, findings, audit_run_id: auditRunId });
      await trx
        .updateTable('agents')
        .set({ ...agentUpdate, node_id: nodeId, reports_processed: sql<number>`reports_processed + 1` })
        .where('agent_id', '=', agentId)
        .execute();
      return {
        ...base,
        ignored: false,
        reason: null,
        message: null,
        node: nodeChange,
        packages: packageSummary,
        package_matching: coverage,
        findings,
        rules: outcomes.map(({ rule, outcome }) => ({ id: rule.id, state: outcome.state, ...(outcome.state === 'not_evaluated' ? { reason: outcome.reason } : {}) })),
        collectors: states,
        sbom_version: sbomVersion,
        audit_run_id: auditRunId,
      };
    });
  }

  return { ingest };
}

export type IngestService = ReturnType<typeof createIngestService>;

/** One row of the received-report log. */
async function logReport(trx: Kysely<Database>, input: ReportInput, sizes: ReportSizes, outcome: 'processed' | 'ignored', reason: string | null, summary: Record<string, unknown>) {
  await trx
    .insertInto('agent_reports')
    .values({
      id: randomUUID(),
      tenant_id: input.scope.tenantId,
      workspace_id: input.scope.workspaceId,
      agent_id: input.agentId,
      node_id: input.nodeId,
      scan_id: input.report.scan_id,
      scanned_at: input.scannedAt,
      received_at: input.now,
      outcome,
      reason,
      compressed_bytes: sizes.compressed,
      raw_bytes: sizes.raw,
      summary: json(summary),
    })
    .execute();
}

/** The agent id: claimed by the first report, refused to every other tenant or workspace. */
async function claimAgent(trx: Kysely<Database>, deps: Deps, { context, scope, agentId, nodeId, report, now }: ReportInput): Promise<void> {
  const claimed = await trx
    .insertInto('agents')
    .values({ agent_id: agentId, tenant_id: scope.tenantId, workspace_id: scope.workspaceId, first_seen_at: now, last_seen_at: now })
    .onConflict((oc) => oc.column('agent_id').doNothing())
    .returning('agent_id')
    .executeTakeFirst();
  if (!claimed) {
    const owner = await trx.selectFrom('agents').select(['tenant_id', 'workspace_id']).where('agent_id', '=', agentId).forUpdate().executeTakeFirstOrThrow();
    if (owner.tenant_id !== scope.tenantId) throw conflict(`agent id "${agentId}" belongs to another tenant`);
    if (owner.workspace_id !== scope.workspaceId) throw conflict(`agent id "${agentId}" belongs to another workspace of this tenant`);
  } else {
    await auditInScope(trx, deps.clock, context, {
      action: 'agent.registered',
      targetType: 'agent',
      targetId: agentId,
      details: { node_id: nodeId, hostname: report.host.hostname, agent_version: report.agent_version },
    });
  }
}

/** Why a report is not processed: a duplicate of the last one, or older than it. Null to process it. */
function ignoredReport(host: HostRow, report: AgentReport, scannedAt: Date): { reason: string; message: string } | null {
  const last = new Date(host.last_scanned_at);
  return host.last_scan_id === report.scan_id
    ? { reason: 'duplicate', message: `scan ${report.scan_id} was processed already` }
    : scannedAt < last
      ? { reason: 'out_of_order', message: `scanned at ${scannedAt.toISOString()}, before the last processed report of this host (${last.toISOString()})` }
      : null;
}

/** The host node (and its link to the cloud instance it runs on). */
async function writeHostNode(trx: Kysely<Database>, { scope, now, nodeId, region, report, packages, agentId }: ReportInput) {
  const previousSummary = packages ? null : ((await nodeProperty(trx, scope, nodeId, 'packages_summary')) as Record<string, unknown> | null);
  const resource: HostResource = { id: nodeId, type: HOST_NODE_TYPE, name: report.host.hostname, region, account_id: report.host.cloud?.account_id ?? '' };
  const nodeChange = await upsertHostNode(trx, scope, now, {
    id: nodeId,
    region,
    native_id: report.host.machine_id,
    name: report.host.hostname,
    account_id: report.host.cloud?.account_id ?? null,
    properties: hostProperties(report, packages, previousSummary),
    agentId,
  });
  await linkCloudInstance(trx, scope, now, nodeId, report.host.cloud);
  return { resource, nodeChange };
}

/** Packages and their matches: the current inventory and its difference to the stored one. */
async function packageChanges(trx: Kysely<Database>, { scope, nodeId, packages, pre, os }: ReportInput, host: HostRow | undefined) {
  let packageDiff: ReturnType<typeof diffPackages> | null = null;
  let current: ReturnType<typeof withMatches> | null = null;
  if (packages && pre) {
    const stored: StoredPackage[] = host ? await readPackages(trx, scope, nodeId) : [];
    const reuse = host?.vuln_state === pre.state ? matchCache(stored, (m) => ecosystemOf(m, os)) : new Map<string, MatchResult>();
    const lookup = (p: HostPackage) => pre.matches.get(matchKey(p)) ?? reuse.get(matchKey(p));
    // Another report of this host may have changed the inventory since the prematch: match the rest here.
    const unknown = packages.filter((p) => p.ecosystem && !lookup(p));
    const late = unknown.length ? await matchPackages(trx, unknown) : new Map<string, MatchResult>();
    current = withMatches(packages, (p) => lookup(p) ?? late.get(matchKey(p)));
    packageDiff = diffPackages(stored, current);
  }
  return { packageDiff, current };
}

/** File integrity: drift against the baseline, and the file states to write. */
async function fileDrift(trx: Kysely<Database>, { scope, nodeId, collected, report }: ReportInput, host: HostRow | undefined) {
  let changes: FileChange[] = [];
  let fileWrites: Array<{ path: string; state: FileState }> = [];
  if (collected.has('file_integrity')) {
    const baseline = host ? await readFiles(trx, scope, nodeId) : new Map<string, FileState>();
    for (const f of report.file_integrity!) {
      const state = fileState(f);
      const previous = baseline.get(f.path);
      if (previous) {
        const change = diffFile(f.path, previous, state);
        if (change) changes.push(change);
      }
      if (!previous || JSON.stringify(previous) !== JSON.stringify(state)) fileWrites.push({ path: f.path, state });
    }
    changes = changes.sort((a, b) => a.path.localeCompare(b.path));
    fileWrites = [...new Map(fileWrites.map((w) => [w.path, w])).values()];
  }
  return { changes, fileWrites };
}

/** The host row (it must exist before its inventories), then the inventories. Returns the SBOM version. */
async function writeHost(
  trx: Kysely<Database>,
  { scope, nodeId, agentId, report, scannedAt, now, states, packages, pre, collected }: ReportInput,
  host: HostRow | undefined,
  packageDiff: ReturnType<typeof diffPackages> | null,
  fileWrites: Array<{ path: string; state: FileState }>,
): Promise<number> {
  const packagesChanged = Boolean(packageDiff && (packageDiff.upserts.length || packageDiff.deletes.length));
  const sbomVersion = host ? host.sbom_version + (packagesChanged ? 1 : 0) : 1;
  const collectorsJson = json(states);
  const hostValues = {
    agent_id: agentId,
    last_scan_id: report.scan_id,
    last_scanned_at: scannedAt,
    last_received_at: now,
    collectors: collectorsJson,
    ...(packages && pre ? { packages_digest: packagesDigest(packages), vuln_state: pre.state } : {}),
    sbom_version: sbomVersion,
    ...(packagesChanged || !host ? { sbom_updated_at: now } : {}),
  };
  if (host) {
    await trx.updateTable('agent_hosts').set(hostValues).where(inWorkspace(scope)).where('node_id', '=', nodeId).execute();
  } else {
    await trx
      .insertInto('agent_hosts')
      .values({
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        node_id: nodeId,
        sbom_serial: randomUUID(),
        sbom_updated_at: now,
        created_at: now,
        packages_digest: '',
        vuln_state: '',
        ...hostValues,
      })
      .execute();
  }
  if (packageDiff) await writePackages(trx, scope, nodeId, packageDiff);
  await writeCollections(
    trx,
    scope,
    nodeId,
    now,
    COLLECTIONS.filter((c) => c !== 'packages' && collected.has(c)).map((c) => ({ name: c, items: report[c] as unknown[] })),
  );
  if (fileWrites.length) await writeFiles(trx, scope, nodeId, now, fileWrites);
  return sbomVersion;
}

/** Findings: vulnerable packages, host rules (and their unknowns), drift. */
async function syncHostFindings(
  trx: Kysely<Database>,
  rules: HostRules,
  { scope, now, report, region, states, collected }: ReportInput,
  resource: HostResource,
  host: HostRow | undefined,
  current: ReturnType<typeof withMatches> | null,
  changes: FileChange[],
) {
  const events: NewEvent[] = [];
  let counts = emptyCounts();
  let vulnerable = 0;
  let vulnerabilities = 0;
  if (current) {
    const desired = await vulnerabilityFindings(trx, rules.vulnerablePackage, current, resource);
    vulnerable = desired.vulnerablePackages;
    vulnerabilities = desired.findings.length;
    // The prefix also covers findings of the earlier one-per-binary-package shape: they resolve here.
    const synced = await syncFindings(trx, scope, now, resource, desired.findings, { rules: { prefix: `${rules.vulnerablePackage.id}-` }, resolveMissing: true });
    counts = addCounts(counts, synced.counts);
    events.push(...synced.events);
  }
  const hostVar = hostVariable(report, region, states);
  const outcomes = rules.conditions.map((rule) => ({ rule, outcome: evaluateRule(rule, { host: hostVar, collected }) }));
  const decided = outcomes.filter((o) => o.outcome.state !== 'not_evaluated');
  const ruleDesired = decided
    .filter((o) => o.outcome.state === 'violated')
    .map(({ rule, outcome }) => ({
      rule_id: rule.id,
      framework: rule.framework,
      control_id: rule.control_id,
      framework_mappings: rule.framework_mappings,
      base_severity: rule.severity,
      severity: rule.severity,
      title: rule.finding_title,
      description: rule.finding_description,
      remediation: rule.remediation.summary,
      cve_ids: [],
      tags: ['host', 'host-configuration'],
      details: {
        kind: 'host-rule',
        collection: rule.collection,
        evidence: outcome.state === 'violated' ? outcome.evidence : [],
        violations: outcome.state === 'violated' ? outcome.items : 0,
      },
    }));
  const ruleSync = await syncFindings(trx, scope, now, resource, ruleDesired, { rules: { ids: decided.map((o) => o.rule.id) }, resolveMissing: true });
  counts = addCounts(counts, ruleSync.counts);
  events.push(...ruleSync.events);
  // A rule the report does not let decide is an unknown outcome of this host (GET /evaluations/unknown),
  // counted against its controls until a report decides it: never a silent pass.
  await replaceResourceUnknowns(
    trx,
    scope,
    now,
    resource,
    outcomes.map((o) => o.rule.id),
    outcomes.flatMap(({ rule, outcome }) =>
      outcome.state === 'not_evaluated'
        ? [
            {
              rule: {
                id: rule.id,
                framework: rule.framework,
                control_id: rule.control_id,
                text: { title: rule.finding_title, description: rule.finding_description, remediation: rule.remediation.summary, framework_mappings: rule.framework_mappings },
              },
              reason: outcome.error ? ('evaluation_error' as const) : ('not_collected' as const),
              missing: outcome.missing,
              detail: outcome.reason,
            },
          ]
        : [],
    ),
  );
  if (changes.length) {
    const driftDesired = changes.map((c) => driftFinding(rules.configDrift, c, { scanId: report.scan_id, previousScanId: host?.last_scan_id ?? null, at: now }));
    const driftSync = await syncFindings(trx, scope, now, resource, driftDesired, {
      rules: { ids: driftDesired.map((d) => d.rule_id) },
      resolveMissing: false,
      updateOpen: mergeDrift,
    });
    counts = addCounts(counts, driftSync.counts);
    events.push(...driftSync.events);
  }
  return { counts, events, vulnerable, vulnerabilities, outcomes };
}

/** Compliance re-evaluation, when the node changed and some rule looks at host nodes. The run's id, or null. */
async function requestHostAudit(trx: Kysely<Database>, deps: Deps, { scope, agentId }: ReportInput, nodeChange: NodeChange): Promise<string | null> {
  if (nodeChange === 'unchanged') return null;
  const hostRuleCount = (await allRules(trx, scope.tenantId)).filter((r) => r.resource_type === HOST_NODE_TYPE).length;
  const frameworks = hostRuleCount ? await enabledFrameworks(trx, scope.tenantId) : [];
  return frameworks.length ? (await requestAudit(trx, deps, scope, frameworks, 'agent', `agent:${agentId}`)).id : null;
}
