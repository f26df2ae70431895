import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { activeFindingsWhere } from '../controls/finding-counts.js';

/** Values of GET /findings?sla=. */
export const SLA_FILTERS = ['overdue', 'due_soon'] as const;
export type SlaFilter = (typeof SLA_FILTERS)[number];

/**
 * How far ahead "due soon" looks. A fixed 24 hours rather than a share of each finding's window:
 * it is the same for every severity (a CRITICAL finding's whole 24-hour window would otherwise be
 * "soon" or never), and it is one range of the (workspace_id, due_at) index.
 */
export const DUE_SOON_MS = 24 * 3_600_000;

/**
 * The open findings of `alias` past their due time at `now` (overdue: due_at <= now, the moment it
 * is due counts), or not yet due but due within DUE_SOON_MS. Served by finding_rows_due_idx
 * (migration 0029), whose predicate the status test repeats.
 */
export function slaWhere(alias: string, filter: SlaFilter, now: Date): RawBuilder<boolean> {
  const status = sql.ref(`${alias}.status`);
  const due = sql.ref(`${alias}.due_at`);
  if (filter === 'overdue') return sql<boolean>`(${status} = 'open' AND ${due} IS NOT NULL AND ${due} <= ${now})`;
  return sql<boolean>`(${status} = 'open' AND ${due} IS NOT NULL AND ${due} > ${now} AND ${due} <= ${new Date(now.getTime() + DUE_SOON_MS)})`;
}

/**
 * Active findings (open, not risk-accepted) of the workspace that are overdue or due soon, for
 * /controls/status; with `framework`, those that count for it, as its other counts.
 */
export async function slaCounts(db: Kysely<Database>, scope: Scope, now: Date, framework?: string): Promise<{ overdue: number; due_soon: number }> {
  const where = await activeFindingsWhere(db, scope, now, { framework });
  // The conditions name only due_at beyond what `where` holds (open, not accepted), so the count is
  // read from finding_rows_due_idx alone, which carries accepted_until (migration 0032). Without a
  // framework it reads finding_rows: through the findings view PostgreSQL reads every row.
  const row = await sql<{ overdue: number; due_soon: number }>`
    SELECT count(*) FILTER (WHERE f.due_at <= ${now})::int AS overdue,
      count(*) FILTER (WHERE f.due_at > ${now})::int AS due_soon
    FROM ${framework ? sql`findings` : sql`finding_rows`} f
    WHERE ${where} AND f.due_at IS NOT NULL AND f.due_at <= ${new Date(now.getTime() + DUE_SOON_MS)}`.execute(db);
  return row.rows[0] ?? { overdue: 0, due_soon: 0 };
}
