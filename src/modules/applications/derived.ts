import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import { quote, tagAttribute } from './filter/language.js';
import './tables.js';
import { nodesInScope } from '../graph/index.js';

/** Tag keys that name an application (compared case-insensitively: AWS estates write `App` and `app`). */
export const APPLICATION_TAG_KEYS = ['application', 'app', 'project', 'service', 'workload'] as const;

export const DISCOVERY_ACTOR = 'system:discovery';

/** The filter of a derived application: the value under any of the key spellings it was found under. */
export function derivedFilter(value: string, keys: string[]): string {
  return keys.map((key) => `${tagAttribute(key)} = ${quote(value)}`).join(' OR ');
}

export function derivedDescription(value: string, keys: string[]): string {
  return `Derived from the tag${keys.length > 1 ? 's' : ''} ${keys.join(', ')} = "${value}"`;
}

/**
 * Brings the derived applications of a workspace in line with the tags of its nodes: one application
 * per distinct value of the application tag keys (`app=checkout` and `Application=checkout` are one
 * application "checkout"). New values get a row (a stable id that services can reference); a value
 * found under new key spellings gets its filter widened; a value no resource carries any more is
 * removed, unless a business service lists it (it then stays, with no members, until removed from
 * the service). Idempotent and safe to run concurrently.
 */
export async function syncDerivedApplications(db: Kysely<Database>, scope: Scope, now: Date): Promise<void> {
  const found = await sql<{ value: string; keys: string[] }>`
    SELECT t.value, array_agg(DISTINCT t.key ORDER BY t.key) AS keys
    FROM ${nodesInScope(scope)} n
    CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(n.tags) = 'object' THEN n.tags ELSE '{}'::jsonb END) AS t(key, value)
    WHERE lower(t.key) = ANY(${[...APPLICATION_TAG_KEYS]}::text[]) AND btrim(t.value) <> '' AND length(t.value) <= 256
    GROUP BY t.value`.execute(db);
  const existing = await db
    .selectFrom('applications')
    .select(['id', 'derived_value', 'derived_keys'])
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .where('derived', '=', true)
    .execute();
  const byValue = new Map(existing.map((row) => [row.derived_value!, row]));
  const seen = new Set<string>();
  const inserts: Array<{ value: string; keys: string[] }> = [];
  const updates: Array<{ id: string; value: string; keys: string[] }> = [];
  for (const row of found.rows) {
    seen.add(row.value);
    const current = byValue.get(row.value);
    if (!current) inserts.push(row);
    else if (current.derived_keys.join('\u0000') !== row.keys.join('\u0000')) updates.push({ id: current.id, ...row });
  }
  const vanished = existing.filter((row) => !seen.has(row.derived_value!)).map((row) => row.id);
  if (inserts.length === 0 && updates.length === 0 && vanished.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < inserts.length; i += 1000) {
      await trx
        .insertInto('applications')
        .values(
          inserts.slice(i, i + 1000).map((row) => ({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            name: row.value,
            description: derivedDescription(row.value, row.keys),
            filter: derivedFilter(row.value, row.keys),
            derived: true,
            derived_value: row.value,
            derived_keys: row.keys,
            created_by: DISCOVERY_ACTOR,
            created_at: now,
            updated_at: now,
          })),
        )
        .onConflict((oc) => oc.columns(['workspace_id', 'derived_value']).where('derived', '=', true).doNothing())
        .execute();
    }
    for (const row of updates) {
      await trx
        .updateTable('applications')
        .set({ derived_keys: row.keys, filter: derivedFilter(row.value, row.keys), description: derivedDescription(row.value, row.keys), updated_at: now })
        .where('id', '=', row.id)
        .execute();
    }
    if (vanished.length) {
      await trx
        .deleteFrom('applications')
        .where('id', '=', sql<string>`ANY(${vanished}::uuid[])`)
        .where('derived', '=', true)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('business_service_applications as bsa').select('bsa.service_id').whereRef('bsa.application_id', '=', 'applications.id'))),
        )
        .execute();
    }
  });
}
