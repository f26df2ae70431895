import { sql } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { toPage, type PageRequest, offsetOf } from '../../../platform/http/pagination.js';
import { SEVERITIES } from '../rules/rule-types.js';
import { acceptanceView, filtered, type AcceptanceView, type FindingFilter } from './findings-repo.js';
import { groupDetails, groupRollupServes, rankedGroups } from '../rollups/group-rollup.js';

/**
 * "<rule title> — security group sg-123 (5 resources)" for a group with a known cause,
 * "<rule title> — account 123456789012, eu-west-1 (5 resources)" for one without.
 */
export function groupLabel(group: { title: string; account_id: string; region: string; group_cause: string | null }, count: number): string {
  const cause = group.group_cause ?? `account ${group.account_id || 'unknown'}, ${group.region || 'global'}`;
  return `${group.title} — ${cause} (${count} resource${count === 1 ? '' : 's'})`;
}

/**
 * Root-cause groups: findings of one rule with one cause, or of one rule in one account and region
 * when the cause is unknown (see grouping.ts), highest severity and largest first, with a sample of
 * their resources.
 */
export function createGroupedFindings(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;

  /** Each group's columns and sample from its findings, for the groups `base` selects. */
  function details(base: ReturnType<typeof filtered>) {
    return base
      .select([
        'f.group_id',
        sql<string>`min(f.rule_id)`.as('rule_id'),
        sql<string>`min(f.title)`.as('title'),
        sql<string>`min(f.framework)`.as('framework'),
        sql<string>`min(f.control_id)`.as('control_id'),
        sql<string>`min(f.account_id)`.as('account_id'),
        sql<string>`min(f.region)`.as('region'),
        sql<string | null>`min(f.group_cause)`.as('group_cause'),
        sql<string>`min(f.resource_type)`.as('resource_type'),
        sql<number>`max(f.severity_rank)::int`.as('top'),
        sql<number>`count(*)::int`.as('findings'),
        sql<string[]>`(array_agg(f.resource_id ORDER BY f.resource_id))[1:20]`.as('resource_ids'),
        sql<Date>`min(f.first_seen)`.as('first_seen'),
        sql<Date>`max(f.last_seen)`.as('last_seen'),
      ])
      .groupBy('f.group_id');
  }

  /** The page ranked by the read model (status and severity filters): only its groups' findings are read. */
  async function fromRollup(scope: Scope, filter: FindingFilter, page: PageRequest, view: AcceptanceView) {
    const { groups, total } = await rankedGroups(db, scope, filter, page, view.now);
    if (groups.length === 0) return { rows: [], total };
    const found = await groupDetails(
      db,
      scope,
      filter,
      groups.map((g) => g.group_id),
      view.now,
    );
    const byId = new Map(found.map((r) => [r.group_id, r]));
    return { rows: groups.flatMap((g) => (byId.has(g.group_id) ? [{ ...byId.get(g.group_id)!, top: g.top, findings: g.findings }] : [])), total };
  }

  async function fromFindings(scope: Scope, filter: FindingFilter, page: PageRequest, view: AcceptanceView) {
    const base = filtered(db, scope, filter, view);
    const [rows, count] = await Promise.all([
      details(base)
        .orderBy(sql`max(f.severity_rank)`, 'desc')
        .orderBy(sql`count(*)`, 'desc')
        .orderBy('f.group_id')
        .limit(page.perPage)
        .offset(offsetOf(page))
        .execute(),
      db
        .selectFrom(base.select('f.group_id').groupBy('f.group_id').as('g'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  return async function grouped(scope: Scope, filter: FindingFilter, page: PageRequest) {
    const now = deps.clock.now();
    const view = await acceptanceView(db, scope, now);
    const { rows, total } = groupRollupServes(filter) ? await fromRollup(scope, filter, page, view) : await fromFindings(scope, filter, page, view);
    const items = rows.map((r) => ({
      group_id: r.group_id,
      label: groupLabel(r, r.findings),
      cause: r.group_cause,
      rule_id: r.rule_id,
      title: r.title,
      framework: r.framework,
      control_id: r.control_id,
      account_id: r.account_id,
      region: r.region,
      resource_type: r.resource_type,
      severity: SEVERITIES[5 - r.top]!,
      findings: r.findings,
      resource_ids: r.resource_ids,
      first_seen: r.first_seen,
      last_seen: r.last_seen,
    }));
    return toPage(items, total, page);
  };
}
