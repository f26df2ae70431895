import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { offsetOf, type PageRequest } from '../../../platform/http/pagination.js';
import type { FindingFilter } from '../findings/findings-repo.js';
import { severityRanks, STATES_OF_STATUS } from './active-rollup.js';
import './tables.js';

/**
 * Root-cause groups ranked from finding_group_rollup (migration 0032): highest severity, then the
 * most findings, then the group id; the page and the number of groups read a row per (group,
 * severity, state), never the findings. Serves the filters the rollup keys hold (status and
 * severity); any other filter is answered from the findings (grouped.ts).
 */
export function groupRollupServes(filter: FindingFilter): boolean {
  const { status: _status, severities: _severities, ...rest } = filter;
  // (The list's `sla` and `ids` are among the rest: no rollup key holds them.)
  return Object.values(rest).every((v) => v === undefined || (Array.isArray(v) && v.length === 0));
}

export interface RankedGroup {
  group_id: string;
  top: number;
  findings: number;
}

export async function rankedGroups(db: Kysely<Database>, scope: Scope, filter: FindingFilter, page: PageRequest, now: Date): Promise<{ groups: RankedGroup[]; total: number }> {
  const ranked = await fromRanking(db, scope, filter, page, now);
  if (ranked) return ranked;
  // Findings whose acceptance expired before the sweeper recorded it are active again (active-rollup.ts).
  const { rows } = await sql<{ group_id: string; top: number; findings: number; total: number }>`
    WITH lapsed AS (
      SELECT f.group_id, f.severity_rank, count(*) AS n
      FROM finding_rows f
      WHERE ${workspaceIs(scope, 'f')} AND f.status = 'open' AND f.accepted_until IS NOT NULL AND f.accepted_until <= ${now}
      GROUP BY 1, 2
    ),
    counts AS (
      SELECT group_id, severity_rank, state, n FROM finding_group_rollup WHERE ${workspaceIs(scope)} AND n <> 0
      UNION ALL SELECT group_id, severity_rank, 'accepted', -n FROM lapsed
      UNION ALL SELECT group_id, severity_rank, 'open', n FROM lapsed
    ),
    selected AS (
      SELECT group_id, severity_rank, sum(n) AS n
      FROM counts
      WHERE state = ANY(${STATES_OF_STATUS[filter.status]}::text[]) AND severity_rank = ANY(${severityRanks(filter.severities)}::smallint[])
      GROUP BY group_id, severity_rank
      HAVING sum(n) > 0
    ),
    groups AS (SELECT group_id, max(severity_rank)::int AS top, sum(n)::int AS findings FROM selected GROUP BY group_id)
    SELECT group_id, top, findings, (count(*) OVER ())::int AS total
    FROM groups
    ORDER BY top DESC, findings DESC, group_id
    LIMIT ${page.perPage} OFFSET ${offsetOf(page)}`.execute(db);
  let total = rows[0]?.total;
  if (total === undefined && offsetOf(page) > 0) {
    // Past the last page: the count alone.
    total = (await rankedGroups(db, scope, filter, { ...page, page: 1 }, now)).total;
  }
  return { groups: rows.map(({ total: _total, ...group }) => group), total: total ?? 0 };
}

/**
 * One state without a severity filter (what the console opens with: open findings) reads the stored
 * ranking through its index (finding_group_rank, migration 0032), unless an acceptance has lapsed
 * before the sweeper recorded it: then the counts are corrected from the rows (rankedGroups).
 */
async function fromRanking(db: Kysely<Database>, scope: Scope, filter: FindingFilter, page: PageRequest, now: Date) {
  if (filter.status === 'all' || filter.severities?.length) return null;
  const lapsed = await sql<{ one: number }>`
    SELECT 1 AS one FROM finding_rows f
    WHERE ${workspaceIs(scope, 'f')} AND f.accepted_until IS NOT NULL AND f.accepted_until <= ${now} AND f.status = 'open' LIMIT 1`.execute(db);
  if (lapsed.rows.length > 0) return null;
  const [rows, count] = await Promise.all([
    db
      .selectFrom('finding_group_rank')
      // The columns as stored: an ORDER BY on a cast alias would not follow the index.
      .select(['group_id', 'top', 'findings'])
      .where(inWorkspace(scope))
      .where('state', '=', filter.status)
      .where('findings', '>', 0)
      .orderBy('top', 'desc')
      .orderBy('findings', 'desc')
      .orderBy('group_id')
      .limit(page.perPage)
      .offset(offsetOf(page))
      .execute(),
    db
      .selectFrom('finding_group_totals')
      .select(sql<number>`groups::int`.as('n'))
      .where(inWorkspace(scope))
      .where('state', '=', filter.status)
      .executeTakeFirst(),
  ]);
  return { groups: rows.map((r) => ({ group_id: r.group_id, top: Number(r.top), findings: Number(r.findings) })), total: count?.n ?? 0 };
}

/** The status condition of the findings list on `f`, at `now`. */
function statusWhere(status: FindingFilter['status'], now: Date) {
  const accepted = sql<boolean>`(f.accepted_until IS NOT NULL AND f.accepted_until > ${now})`;
  if (status === 'open') return sql<boolean>`f.status = 'open' AND NOT ${accepted}`;
  if (status === 'accepted') return sql<boolean>`f.status = 'open' AND ${accepted}`;
  if (status === 'resolved') return sql<boolean>`f.status = 'resolved'`;
  return sql<boolean>`true`;
}

export interface GroupDetails {
  group_id: string;
  rule_id: string;
  title: string;
  framework: string;
  control_id: string;
  account_id: string;
  region: string;
  group_cause: string | null;
  resource_type: string;
  resource_ids: string[];
  first_seen: Date;
  last_seen: Date;
}

/**
 * The details of the ranked groups of a page, group by group through findings_group_idx (migration
 * 0032): first and last seen over the group's findings of the filter, its first 20 resources, and
 * the columns of its first finding (a group is one rule and one cause: they are the group's).
 */
export async function groupDetails(db: Kysely<Database>, scope: Scope, filter: FindingFilter, groupIds: string[], now: Date): Promise<GroupDetails[]> {
  const where = sql<boolean>`${workspaceIs(scope, 'f')} AND f.group_id = g.group_id AND ${statusWhere(filter.status, now)}
    AND f.severity_rank = ANY(${severityRanks(filter.severities)}::smallint[])`;
  const { rows } = await sql<GroupDetails>`
    SELECT g.group_id, a.rule_id, a.title, a.framework, a.control_id, a.account_id, a.region, a.group_cause, a.resource_type,
      s.resource_ids, d.first_seen, d.last_seen
    FROM unnest(${groupIds}::text[]) AS g(group_id)
    CROSS JOIN LATERAL (SELECT min(f.first_seen) AS first_seen, max(f.last_seen) AS last_seen FROM finding_rows f WHERE ${where}) d
    CROSS JOIN LATERAL (
      SELECT coalesce(array_agg(x.resource_id), '{}') AS resource_ids
      FROM (SELECT f.resource_id FROM finding_rows f WHERE ${where} ORDER BY f.status, f.resource_id LIMIT 20) x
    ) s
    CROSS JOIN LATERAL (
      SELECT f.rule_id, f.title, f.framework, f.control_id, f.account_id, f.region, f.group_cause, f.resource_type
      FROM findings f WHERE ${where} ORDER BY f.status, f.resource_id LIMIT 1
    ) a`.execute(db);
  return rows;
}
