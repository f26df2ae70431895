import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inTenant, inWorkspace, type Scope } from '../../../platform/db/scope.js';
import '../tables.js';

/** Reads of the audit run history for reports (their method section and score history). */

/** The scope's last succeeded audit run (by finish), with its stats; undefined when none has succeeded. */
export function lastSucceededAudit(db: Kysely<Database>, scope: Scope) {
  return db
    .selectFrom('audit_runs')
    .select(['id', 'started_at', 'finished_at', 'stats'])
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .where('status', '=', 'succeeded')
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The baselines (scores just before its findings changed) of the scope's latest `limit` started audit runs, newest first. */
export function auditBaselines(db: Kysely<Database>, scope: Scope, limit: number) {
  return db
    .selectFrom('audit_runs')
    .select(['started_at', 'baseline'])
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .where('baseline', 'is not', null)
    .where('started_at', 'is not', null)
    .orderBy('started_at', 'desc')
    .limit(limit)
    .execute();
}
