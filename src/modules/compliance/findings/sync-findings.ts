import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { json } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import type { NewEvent } from '../../../platform/events/outbox.js';
import { findingCreated, findingReopened, findingResolved, reopening, severityChanged } from './finding-events.js';
import { findingId, groupIdOf } from './identity.js';
import type { FrameworkMapping, Severity } from '../rules/rule-types.js';
import { storeFindingTexts, textIdOf, type FindingText } from './finding-texts.js';
import '../tables.js';

/**
 * Brings the findings one report decides for one resource in line with it: the caller computes the
 * findings that should be open for the resource (an agent's CVE matches, host rules and drift; a
 * scanner import's failed checks), this creates, updates, reopens and resolves rows of the findings
 * table accordingly, and returns the events to emit in the same transaction. Findings of the
 * compliance engine are never touched: only the rule ids passed in (or the prefix) are read.
 */

export interface HostResource {
  id: string;
  type: string;
  name: string;
  region: string;
  account_id: string;
}

export interface DesiredFinding {
  rule_id: string;
  framework: string;
  control_id: string;
  framework_mappings: FrameworkMapping[];
  base_severity: Severity;
  severity: Severity;
  title: string;
  description: string;
  remediation: string;
  cve_ids: string[];
  tags: string[];
  details: Record<string, unknown>;
  /** Why the severity is what it is, for finding.severity_changed (e.g. known_exploited). */
  severity_reason?: string;
  /** An imported finding's tool, its check and finding ids, and its file location (migration 0036). */
  origin?: FindingOrigin;
}

export interface FindingOrigin {
  source: string;
  check_id: string;
  finding_id: string;
  location: Record<string, unknown> | null;
}

export interface SyncCounts {
  created: number;
  reopened: number;
  resolved: number;
  updated: number;
}

export const emptyCounts = (): SyncCounts => ({ created: 0, reopened: 0, resolved: 0, updated: 0 });

export function addCounts(a: SyncCounts, b: SyncCounts): SyncCounts {
  return { created: a.created + b.created, reopened: a.reopened + b.reopened, resolved: a.resolved + b.resolved, updated: a.updated + b.updated };
}

interface Existing {
  id: string;
  rule_id: string;
  status: 'open' | 'resolved';
  severity: Severity;
  base_severity: Severity;
  title: string;
  description: string;
  remediation: string;
  cve_ids: string[];
  tags: string[];
  details: Record<string, unknown>;
  created_at: Date;
  source_finding_id: string | null;
  location: Record<string, unknown> | null;
}

/** JSON with sorted keys: jsonb does not keep key order, so stored and new details compare this way. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value instanceof Date ? value.toISOString() : value) ?? 'null';
}

export interface SyncOptions {
  /** Which existing findings this sync decides: exact rule ids, or every rule id with the prefix. */
  rules: { ids: string[] } | { prefix: string };
  /** Open findings of those rules that are not desired any more are resolved (false for drift). */
  resolveMissing: boolean;
  /** Desired findings that are open already get their content replaced (false: left as they are). */
  updateOpen?: (existing: { details: Record<string, unknown> }, desired: DesiredFinding) => DesiredFinding;
  /** resolved_by of what this sync resolves, and the reason of its severity changes (default: the agent's). */
  resolvedBy?: string;
  severityReason?: string;
}

/** The origin columns of a row: an agent's or our rules' findings have none. */
function originColumns(origin: FindingOrigin | undefined) {
  if (!origin) return {};
  return { source: origin.source, source_check_id: origin.check_id, source_finding_id: origin.finding_id, location: origin.location ? json(origin.location) : null };
}

const INSERT_CHUNK = 500;

/** What one sync writes: planned per resource, written in a few statements (writePlan). */
interface SyncPlan {
  counts: SyncCounts;
  events: NewEvent[];
  /** The texts the writes refer to (by their digest), stored in one statement before them. */
  texts: FindingText[];
  inserts: Array<Record<string, unknown>>;
  updates: Array<{ id: string; desired: DesiredFinding; resource: HostResource; reopen: boolean }>;
  /** Findings reported again unchanged: only last_seen moves. */
  touch: string[];
  resolve: Array<{ id: string; rule_id: string; resource_id: string }>;
}

const emptyPlan = (): SyncPlan => ({ counts: emptyCounts(), events: [], texts: [], inserts: [], updates: [], touch: [], resolve: [] });

const EXISTING_COLUMNS = [
  'id',
  'rule_id',
  'status',
  'severity',
  'base_severity',
  'title',
  'description',
  'remediation',
  'cve_ids',
  'tags',
  'details',
  'created_at',
  'source_finding_id',
  'location',
] as const;

/** The findings of one resource that the options' rules decide. */
async function existingOfResource(trx: Kysely<Database>, scope: Scope, resourceId: string, rules: SyncOptions['rules']): Promise<Map<string, Existing>> {
  let query = trx.selectFrom('findings').select(EXISTING_COLUMNS).where(inWorkspace(scope)).where('resource_id', '=', resourceId);
  query = 'ids' in rules ? query.where('rule_id', '=', sql<string>`ANY(${rules.ids}::text[])`) : query.where('rule_id', 'like', `${rules.prefix.replace(/[%_\\]/g, '\\$&')}%`);
  return new Map(((await query.execute()) as Existing[]).map((f) => [f.id, f]));
}

function eventFinding(resource: HostResource, id: string, d: DesiredFinding, createdAt: Date) {
  return {
    id,
    rule_id: d.rule_id,
    framework: d.framework,
    control_id: d.control_id,
    severity: d.severity,
    title: d.title,
    description: d.description,
    resource_id: resource.id,
    resource_type: resource.type,
    resource_name: resource.name,
    region: resource.region,
    remediation: d.remediation,
    created_at: createdAt,
  };
}

function insertRow(scope: Scope, now: Date, resource: HostResource, id: string, d: DesiredFinding): Record<string, unknown> {
  return {
    tenant_id: scope.tenantId,
    workspace_id: scope.workspaceId,
    id,
    rule_id: d.rule_id,
    framework: d.framework,
    control_id: d.control_id,
    text_id: textIdOf(d),
    base_severity: d.base_severity,
    severity: d.severity,
    status: 'open',
    resource_id: resource.id,
    resource_type: resource.type,
    resource_name: resource.name,
    region: resource.region,
    account_id: resource.account_id,
    cve_ids: d.cve_ids,
    tags: d.tags,
    details: json(d.details),
    ...originColumns(d.origin),
    group_id: groupIdOf(d.rule_id, resource.account_id, resource.region),
    first_seen: now,
    last_seen: now,
    created_at: now,
    updated_at: now,
  };
}

function contentChanged(found: Existing, d: DesiredFinding): boolean {
  return (
    found.title !== d.title ||
    found.description !== d.description ||
    found.remediation !== d.remediation ||
    canonical(found.cve_ids) !== canonical(d.cve_ids) ||
    canonical(found.tags) !== canonical(d.tags) ||
    canonical(found.details) !== canonical(d.details) ||
    (d.origin !== undefined && (found.source_finding_id !== d.origin.finding_id || canonical(found.location) !== canonical(d.origin.location)))
  );
}

/** Adds to the plan what bringing one resource's findings in line with `desired` takes. */
function planResource(plan: SyncPlan, scope: Scope, now: Date, resource: HostResource, desired: DesiredFinding[], existing: Map<string, Existing>, options: SyncOptions): void {
  const wanted = new Set<string>();
  for (const original of desired) {
    const id = findingId(original.rule_id, resource.id);
    wanted.add(id);
    const found = existing.get(id);
    if (!found) {
      plan.inserts.push(insertRow(scope, now, resource, id, original));
      plan.texts.push(original);
      plan.events.push(findingCreated(scope, eventFinding(resource, id, original, now)));
      plan.counts.created++;
      continue;
    }
    const d = found.status === 'open' && options.updateOpen ? options.updateOpen(found, original) : original;
    const severityMoved = found.severity !== d.severity;
    if (found.status === 'open' && !contentChanged(found, d) && !severityMoved && found.base_severity === d.base_severity) {
      plan.touch.push(id);
      continue;
    }
    plan.texts.push(d);
    plan.updates.push({ id, desired: d, resource, reopen: found.status === 'resolved' });
    if (found.status === 'resolved') {
      plan.events.push(findingReopened(scope, eventFinding(resource, id, d, found.created_at), now));
      plan.counts.reopened++;
    } else {
      plan.counts.updated++;
      if (severityMoved)
        plan.events.push(
          severityChanged(scope, { id, rule_id: d.rule_id, resource_id: resource.id }, found.severity, d.severity, d.severity_reason ?? options.severityReason ?? 'agent_report'),
        );
    }
  }
  if (!options.resolveMissing) return;
  for (const f of existing.values()) {
    if (f.status !== 'open' || wanted.has(f.id)) continue;
    plan.resolve.push({ id: f.id, rule_id: f.rule_id, resource_id: resource.id });
    plan.counts.resolved++;
  }
}

async function writePlan(trx: Kysely<Database>, scope: Scope, now: Date, plan: SyncPlan, options: Pick<SyncOptions, 'resolvedBy'>): Promise<void> {
  await storeFindingTexts(trx, scope, plan.texts);
  for (const { id, desired: d, resource, reopen } of plan.updates) {
    await trx
      .updateTable('finding_rows')
      .set({
        status: 'open',
        text_id: textIdOf(d),
        cve_ids: d.cve_ids,
        tags: d.tags,
        details: json(d.details),
        ...originColumns(d.origin),
        base_severity: d.base_severity,
        severity: d.severity,
        resource_name: resource.name,
        last_seen: now,
        updated_at: now,
        ...(reopen ? { resolved_at: null, resolved_by: null, ...reopening(now) } : {}),
      })
      .where(inWorkspace(scope))
      .where('id', '=', id)
      .execute();
  }
  for (let i = 0; i < plan.inserts.length; i += INSERT_CHUNK) {
    await trx
      .insertInto('finding_rows')
      .values(plan.inserts.slice(i, i + INSERT_CHUNK) as never)
      .execute();
  }
  if (plan.touch.length) {
    await trx
      .updateTable('finding_rows')
      .set({ last_seen: now })
      .where(inWorkspace(scope))
      .where('id', '=', sql<string>`ANY(${plan.touch}::text[])`)
      .execute();
  }
  if (plan.resolve.length) {
    const resolvedBy = options.resolvedBy ?? 'agent';
    await trx
      .updateTable('finding_rows')
      .set({ status: 'resolved', resolved_at: now, resolved_by: resolvedBy, updated_at: now })
      .where(inWorkspace(scope))
      .where('id', '=', sql<string>`ANY(${plan.resolve.map((f) => f.id)}::text[])`)
      .execute();
    for (const f of plan.resolve) plan.events.push(findingResolved(scope, f, now, resolvedBy));
  }
}

export async function syncFindings(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  resource: HostResource,
  desired: DesiredFinding[],
  options: SyncOptions,
): Promise<{ counts: SyncCounts; events: NewEvent[] }> {
  if ('ids' in options.rules && options.rules.ids.length === 0 && desired.length === 0) return { counts: emptyCounts(), events: [] };
  const existing = await existingOfResource(trx, scope, resource.id, options.rules);
  const plan = emptyPlan();
  planResource(plan, scope, now, resource, desired, existing, options);
  await writePlan(trx, scope, now, plan, options);
  return { counts: plan.counts, events: plan.events };
}

/**
 * The findings many resources report, each deciding exactly the rules it reports (nothing is
 * resolved): a scanner import's batch. One read and a few writes for the whole batch, instead of
 * syncFindings' round trips per resource, which made a 100,000-record import take minutes.
 */
export async function reportFindings(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  reports: Array<{ resource: HostResource; desired: DesiredFinding[] }>,
  options: Pick<SyncOptions, 'severityReason'> = {},
): Promise<{ counts: SyncCounts; events: NewEvent[]; changedResourceIds: string[] }> {
  const ids = reports.flatMap(({ resource, desired }) => desired.map((d) => findingId(d.rule_id, resource.id)));
  const rows = ids.length
    ? ((await trx
        .selectFrom('findings')
        .select(EXISTING_COLUMNS)
        .where(inWorkspace(scope))
        .where('id', '=', sql<string>`ANY(${ids}::text[])`)
        .execute()) as Existing[])
    : [];
  const existing = new Map(rows.map((f) => [f.id, f]));
  const plan = emptyPlan();
  const changedResourceIds: string[] = [];
  for (const { resource, desired } of reports) {
    const before = plan.texts.length;
    planResource(plan, scope, now, resource, desired, existing, { rules: { ids: [] }, resolveMissing: false, ...options });
    if (plan.texts.length > before) changedResourceIds.push(resource.id);
  }
  await writePlan(trx, scope, now, plan, {});
  return { counts: plan.counts, events: plan.events, changedResourceIds };
}
