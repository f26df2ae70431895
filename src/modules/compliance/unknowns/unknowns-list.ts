import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import type { UnknownReason } from './tables.js';
import './tables.js';
import '../tables.js';

export interface UnknownFilter {
  /** The rule's own framework or a mapped one. */
  framework?: string;
  /** The rule's own control or a mapped one (of `framework` when given). */
  control_id?: string;
  rule_id?: string;
  resource_id?: string;
  resource_type?: string;
  reason?: UnknownReason;
}

/**
 * The unknown evaluations of the workspace (GET /evaluations/unknown), ordered by rule and resource,
 * each with the rule's controls (its primary control and its text's mappings) and why: the paths it
 * lacks or the error.
 */
export async function listUnknowns(db: Kysely<Database>, scope: Scope, filter: UnknownFilter, page: PageRequest) {
  const base = db
    .selectFrom('evaluation_unknowns as u')
    .innerJoin('finding_texts as t', (join) => join.onRef('t.workspace_id', '=', 'u.workspace_id').onRef('t.id', '=', 'u.text_id'))
    .where(inWorkspace(scope, 'u'))
    .$if(filter.rule_id !== undefined, (q) => q.where('u.rule_id', '=', filter.rule_id!))
    .$if(filter.resource_id !== undefined, (q) => q.where('u.resource_id', '=', filter.resource_id!))
    .$if(filter.resource_type !== undefined, (q) => q.where('u.resource_type', '=', filter.resource_type!))
    .$if(filter.reason !== undefined, (q) => q.where('u.reason', '=', filter.reason!))
    .$if(filter.framework !== undefined || filter.control_id !== undefined, (q) => q.where(controlMatch(filter)));
  const [items, count] = await Promise.all([
    base
      .select([
        'u.rule_id',
        'u.resource_id',
        'u.resource_type',
        'u.resource_name',
        'u.region',
        'u.account_id',
        'u.framework',
        'u.control_id',
        't.framework_mappings',
        't.title',
        'u.reason',
        'u.missing_paths',
        'u.detail',
        'u.run_id',
        'u.first_seen',
        'u.last_seen',
      ])
      .orderBy('u.rule_id')
      .orderBy('u.resource_id')
      .limit(page.perPage)
      .offset(offsetOf(page))
      .execute(),
    base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return toPage(items, count.n, page);
}

/** The rule's own (framework, control) or one of its text's mappings matches the filter. */
function controlMatch(filter: UnknownFilter) {
  const own = [
    filter.framework === undefined ? sql`true` : sql`u.framework = ${filter.framework}`,
    filter.control_id === undefined ? sql`true` : sql`u.control_id = ${filter.control_id}`,
  ];
  const mapping: Record<string, string> = {};
  if (filter.framework !== undefined) mapping.framework = filter.framework;
  if (filter.control_id !== undefined) mapping.control_id = filter.control_id;
  return sql<SqlBool>`((${own[0]} AND ${own[1]}) OR t.framework_mappings @> ${JSON.stringify([mapping])}::jsonb)`;
}
