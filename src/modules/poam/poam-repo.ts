import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inScope, type Scope, inTenant } from '../../platform/db/scope.js';
import { formatPoamId, isOverdue, isoDate, type Milestone, type PoamSeverity, type PoamStatus } from './model.js';
import type { PoamItemsTable } from './tables.js';
import './tables.js';

export type PoamRow = Selectable<PoamItemsTable>;

export interface PoamComment {
  at: string;
  author: string;
  text: string;
  /** Set on the entries that record a status change (null for plain comments). */
  status_from: PoamStatus | null;
  status_to: PoamStatus | null;
}

/** A POA&M item as the API returns it (contracts section 6, plus source, overdue, created_by, closed_at). */
export interface PoamItem {
  id: string;
  weakness_name: string;
  weakness_description: string;
  control_ids: string[];
  severity: PoamSeverity;
  point_of_contact: string;
  scheduled_completion: string;
  milestones: Milestone[];
  status: PoamStatus;
  comments: PoamComment[];
  vendor_dependency: boolean;
  deviation_request: string | null;
  finding_id: string | null;
  evidence_ids: string[];
  source: string;
  overdue: boolean;
  created_by: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface PoamFilter {
  status?: PoamStatus[];
  severity?: PoamSeverity[];
  control_id?: string;
  point_of_contact?: string;
  finding_id?: string;
  /** true: only overdue items; false: only items that are not overdue. */
  overdue?: boolean;
}

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();

/** The items of the scope, filtered. `today` decides overdue (scheduled completion before it, not closed). */
export function selectItems(db: Kysely<Database>, scope: Scope, filter: PoamFilter, today: string) {
  let query = db.selectFrom('poam_items').where(inScope(scope));
  if (filter.status?.length) query = query.where('status', 'in', filter.status);
  if (filter.severity?.length) query = query.where('severity', 'in', filter.severity);
  if (filter.control_id) query = query.where(sql<boolean>`control_ids @> ARRAY[${filter.control_id}]::text[]`);
  if (filter.point_of_contact) query = query.where(sql<boolean>`lower(point_of_contact) = lower(${filter.point_of_contact})`);
  if (filter.finding_id) query = query.where('finding_id', '=', filter.finding_id);
  if (filter.overdue === true) query = query.where('status', '<>', 'closed').where('scheduled_completion', '<', today);
  if (filter.overdue === false) query = query.where((eb) => eb.or([eb('status', '=', 'closed'), eb('scheduled_completion', '>=', today)]));
  return query;
}

export async function findRow(db: Kysely<Database>, scope: Scope, number: number, forUpdate = false): Promise<PoamRow | undefined> {
  let query = db.selectFrom('poam_items').selectAll().where(inScope(scope)).where('number', '=', number);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Comments and evidence ids of the rows, in one query each, then the API shape. */
export async function present(db: Kysely<Database>, rows: PoamRow[], now: Date): Promise<PoamItem[]> {
  if (rows.length === 0) return [];
  const tenantId = rows[0]!.tenant_id;
  const numbers = rows.map((r) => r.number);
  const [comments, evidence] = await Promise.all([
    db
      .selectFrom('poam_comments')
      .select(['number', 'author', 'text', 'status_from', 'status_to', 'created_at'])
      .where(inTenant(tenantId))
      .where('number', 'in', numbers)
      .orderBy('id')
      .execute(),
    db.selectFrom('poam_evidence').select(['number', 'id']).where(inTenant(tenantId)).where('number', 'in', numbers).orderBy('created_at').orderBy('id').execute(),
  ]);
  const commentsOf = new Map<number, PoamComment[]>();
  for (const c of comments) {
    const list = commentsOf.get(c.number) ?? [];
    list.push({ at: iso(c.created_at), author: c.author, text: c.text, status_from: c.status_from, status_to: c.status_to });
    commentsOf.set(c.number, list);
  }
  const evidenceOf = new Map<number, string[]>();
  for (const e of evidence) {
    const list = evidenceOf.get(e.number) ?? [];
    list.push(e.id);
    evidenceOf.set(e.number, list);
  }
  return rows.map((row) => ({
    id: formatPoamId(row.number),
    weakness_name: row.weakness_name,
    weakness_description: row.weakness_description,
    control_ids: row.control_ids,
    severity: row.severity,
    point_of_contact: row.point_of_contact,
    scheduled_completion: row.scheduled_completion,
    milestones: row.milestones,
    status: row.status,
    comments: commentsOf.get(row.number) ?? [],
    vendor_dependency: row.vendor_dependency,
    deviation_request: row.deviation_request,
    finding_id: row.finding_id,
    evidence_ids: evidenceOf.get(row.number) ?? [],
    source: row.source,
    overdue: isOverdue(row, now),
    created_by: row.created_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    closed_at: row.closed_at ? iso(row.closed_at) : null,
  }));
}

export async function loadItems(db: Kysely<Database>, scope: Scope, numbers: number[], now: Date): Promise<PoamItem[]> {
  if (numbers.length === 0) return [];
  const rows = await db.selectFrom('poam_items').selectAll().where(inScope(scope)).where('number', 'in', numbers).orderBy('number').execute();
  return present(db, rows, now);
}

export async function appendComment(
  trx: Kysely<Database>,
  tenantId: string,
  number: number,
  entry: { author: string; text: string; status_from?: PoamStatus | null; status_to?: PoamStatus | null; at: Date },
): Promise<void> {
  await trx
    .insertInto('poam_comments')
    .values({
      tenant_id: tenantId,
      number,
      author: entry.author,
      text: entry.text,
      status_from: entry.status_from ?? null,
      status_to: entry.status_to ?? null,
      created_at: entry.at,
    })
    .execute();
}

/** Today's date (UTC) for overdue decisions. */
export const todayOf = (now: Date) => isoDate(now);
