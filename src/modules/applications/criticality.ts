import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { AppDeps } from '../../deps.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import { anyOf, storedFilter } from './filter/sql.js';
import { CRITICALITIES, type Criticality } from './tables.js';
import './tables.js';
import { nodesInScope } from '../graph/index.js';

const CHUNK = 10_000;

/**
 * The business-service criticality of resources, for the risk score of findings
 * (`ScoringSources.criticality` of compliance/findings/scored.ts): a resource takes the highest
 * criticality among the services whose applications contain it; resources in no service are absent
 * from the map. One query per 10,000 resources, none when the workspace has no service.
 */
export function serviceCriticality(deps: Pick<AppDeps, 'database'>) {
  const db = deps.database.db;
  return (scope: Scope, resourceIds: string[]) => resourceCriticality(db, scope, resourceIds);
}

/** serviceCriticality's answer on a given connection or transaction (the stored risk scores are written in the writer's). */
export async function resourceCriticality(db: Kysely<Database>, scope: Scope, resourceIds: string[]): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  if (resourceIds.length === 0) return result;
  const members = await db
    .selectFrom('business_services as s')
    .innerJoin('business_service_applications as bsa', 'bsa.service_id', 's.id')
    .innerJoin('applications as a', 'a.id', 'bsa.application_id')
    .select(['s.criticality', 'a.filter'])
    .where(inWorkspace(scope, 's'))
    .where(inTenant(scope.tenantId, 's'))
    .execute();
  if (members.length === 0) return result;
  const levels = CRITICALITIES.map((level) => ({
    level,
    filters: [...new Set(members.filter((m) => m.criticality === level).map((m) => m.filter))].map((f) => storedFilter(f)),
  })).filter((l) => l.filters.length > 0);
  const cases = sql.join(
    levels.map((l) => sql`WHEN ${anyOf(l.filters)} THEN ${l.level}::text`),
    sql` `,
  );
  const ids = [...new Set(resourceIds)];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await sql<{ id: string; criticality: Criticality | null }>`
      SELECT n.id, CASE ${cases} END AS criticality FROM ${nodesInScope(scope)} n
      WHERE n.id = ANY(${ids.slice(i, i + CHUNK)}::text[])`.execute(db);
    for (const row of rows.rows) if (row.criticality) result.set(row.id, row.criticality);
  }
  return result;
}
