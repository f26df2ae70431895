import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import { acceptedAt, hasLiveAcceptances } from '../../risk/index.js';
import { SEVERITIES } from '../rules/rule-types.js';
import '../tables.js';
import { lookupTable } from '../../../platform/lookup-table.js';
import { slaWhere, type SlaFilter } from '../sla/sla-filter.js';

export type FindingStatusFilter = 'open' | 'resolved' | 'accepted' | 'all';

export interface FindingFilter {
  ids?: string[];
  framework?: string;
  severities?: string[];
  status: FindingStatusFilter;
  resourceType?: string;
  resourceId?: string;
  controlId?: string;
  ruleId?: string;
  /** Who found it: 'controlgraph' or an imported tool (migration 0036). */
  source?: string;
  groupId?: string;
  search?: string;
  /** Open findings past their due time, or due within the next 24 hours (sla/sla-filter.ts). */
  sla?: SlaFilter;
}

export { FINDING_SORTS } from './sorts.js';

/**
 * Whether findings queries of a workspace must check acceptances at `now`; false when it has no live
 * acceptance, which spares every query a per-finding anti-join.
 */
export interface AcceptanceView {
  now: Date;
  live: boolean;
}

export async function acceptanceView(db: Kysely<Database>, scope: Scope, now: Date): Promise<AcceptanceView> {
  return { now, live: await hasLiveAcceptances(db, scope.workspaceId, now) };
}

/** The columns a finding is shown with; `status` is the effective one (accepted while covered). */
export function findingSelection(view: AcceptanceView) {
  const status = view.live
    ? sql<'open' | 'resolved' | 'accepted'>`CASE WHEN f.status = 'open' AND ${acceptedAt('f', view.now)} THEN 'accepted' ELSE f.status END`
    : sql<'open' | 'resolved' | 'accepted'>`f.status`;
  return [
    'f.id',
    'f.rule_id',
    'f.framework',
    'f.control_id',
    'f.framework_mappings',
    'f.severity',
    'f.base_severity',
    'f.title',
    'f.description',
    'f.remediation',
    'f.resource_id',
    'f.resource_type',
    'f.resource_name',
    'f.region',
    'f.account_id',
    'f.cve_ids',
    'f.tags',
    'f.details',
    'f.group_id',
    'f.first_seen',
    'f.last_seen',
    'f.created_at',
    'f.updated_at',
    'f.resolved_at',
    'f.resolved_by',
    'f.due_at',
    'f.reopened_at',
    'f.reopen_count',
    'f.source',
    'f.source_check_id',
    'f.source_finding_id',
    'f.location',
    status.as('status'),
  ] as const;
}

type FindingsQuery = SelectQueryBuilder<Database & { f: Database['findings'] }, 'f', object>;

const RANK: Record<string, number> = lookupTable(Object.fromEntries(SEVERITIES.map((s, i) => [s, 5 - i])));

/**
 * Applies a filter to `findings as f` of the scope. The workspace id alone scopes findings: workspace
 * ids are unique across tenants and the authenticator checked the workspace belongs to the tenant,
 * so a tenant_id predicate would only force heap visits on index scans.
 */
export function filtered(db: Kysely<Database>, scope: Scope, filter: FindingFilter, view: AcceptanceView): FindingsQuery {
  let q = db.selectFrom('findings as f').where(inWorkspace(scope, 'f')) as unknown as FindingsQuery;
  if (filter.status === 'open') {
    q = q.where('f.status', '=', 'open');
    if (view.live) q = q.where(sql<boolean>`NOT ${acceptedAt('f', view.now)}`);
  } else if (filter.status === 'accepted') {
    q = view.live ? q.where('f.status', '=', 'open').where(acceptedAt('f', view.now)) : q.where(sql<boolean>`false`);
  } else if (filter.status === 'resolved') q = q.where('f.status', '=', 'resolved');
  if (filter.ids?.length) q = q.where('f.id', '=', sql<string>`ANY(${filter.ids}::text[])`);
  // Through severity_rank, which the list index holds.
  if (filter.severities?.length) q = q.where(sql<boolean>`f.severity_rank = ANY(${filter.severities.map((s) => RANK[s])}::smallint[])`);
  if (filter.resourceType) q = q.where('f.resource_type', '=', filter.resourceType);
  if (filter.resourceId) q = q.where('f.resource_id', '=', filter.resourceId);
  if (filter.ruleId) q = q.where('f.rule_id', '=', filter.ruleId);
  if (filter.source) q = q.where('f.source', '=', filter.source);
  if (filter.groupId) q = q.where('f.group_id', '=', filter.groupId);
  if (filter.sla) q = q.where(slaWhere('f', filter.sla, view.now));
  // The text columns (title, description, mappings) are the rule's, stored once per text
  // (migration 0017): their filters match the few texts of the workspace and select the findings by
  // text_id, instead of joining every finding to its text to test it.
  // As `text_id = ANY(ARRAY(texts))`, not `IN (texts)`: the array is computed once and the
  // condition is an index condition (finding_rows_text_idx, migration 0030) that an OR with the
  // finding's own columns combines (BitmapOr) instead of a filter on every finding.
  const texts = (where: RawBuilder<boolean>) => sql<string>`ANY(ARRAY(${db.selectFrom('finding_texts as t').select('t.id').where(inWorkspace(scope, 't')).where(where)}))`;
  // framework and control match the finding's own control or any of its cross-framework mappings.
  const mapped = (mapping: object) => texts(sql<boolean>`t.framework_mappings @> ${JSON.stringify([mapping])}::jsonb`);
  if (filter.framework && filter.controlId) {
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('f.framework', '=', filter.framework!), eb('f.control_id', '=', filter.controlId!)]),
        eb('f.text_id', '=', mapped({ framework: filter.framework, control_id: filter.controlId })),
      ]),
    );
  } else if (filter.framework) {
    q = q.where((eb) => eb.or([eb('f.framework', '=', filter.framework!), eb('f.text_id', '=', mapped({ framework: filter.framework }))]));
  } else if (filter.controlId) {
    q = q.where((eb) => eb.or([eb('f.control_id', '=', filter.controlId!), eb('f.text_id', '=', mapped({ control_id: filter.controlId }))]));
  }
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[%_\\]/g, '\\$&')}%`;
    const matching = texts(sql<boolean>`(t.title ILIKE ${pattern} OR t.description ILIKE ${pattern})`);
    // The resource id through its trigram index (finding_rows_resource_trgm_idx, migration 0030).
    q = q.where((eb) => eb.or([eb('f.text_id', '=', matching), eb('f.resource_id', 'ilike', pattern)]));
  }
  return q;
}

export async function getFinding(db: Kysely<Database>, scope: Scope, id: string, now: Date) {
  const view = await acceptanceView(db, scope, now);
  return filtered(db, scope, { status: 'all', ids: [id] }, view)
    .select(findingSelection(view))
    .executeTakeFirst();
}
