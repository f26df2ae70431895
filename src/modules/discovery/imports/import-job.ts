import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import { json, type Database } from '../../../platform/db/schema.js';
import { PermanentJobError, type JobDefinition } from '../../../platform/jobs/definition.js';
import { applyImport, type ImportProgress } from './apply-import.js';
import type { ImportFormat } from './import-record.js';
import { IMPORT_JOB, IMPORT_MAX_ATTEMPTS } from './import-service.js';
import { parserFor } from './parsers.js';
import { auditWorkspace } from '../audit-workspace.js';
import './tables.js';

/** The import's counts as columns. */
function countColumns(p: ImportProgress) {
  return {
    source: p.source,
    records: p.records,
    findings_created: p.findings_created,
    findings_updated: p.findings_updated,
    findings_resolved: p.findings_resolved,
    findings_reopened: p.findings_reopened,
    nodes: p.nodes,
    errors_count: p.errors_count,
    errors: json(p.errors),
  };
}

/**
 * Applies an uploaded scanner file (validated on upload, kept in the artifact store): re-reads it,
 * applies it in batches and writes the counts to the import after each. A retried attempt starts
 * over from the file: applying is idempotent, so it converges. The file is deleted when the import
 * ends either way.
 */
export function importJob(deps: Pick<AppDeps, 'database' | 'clock' | 'artifacts'>): JobDefinition {
  const db = deps.database.db;
  const dropFile = async (key: string | null) => {
    if (key) await deps.artifacts?.delete(key);
  };
  return {
    kind: IMPORT_JOB,
    maxAttempts: IMPORT_MAX_ATTEMPTS,
    leaseMs: 120_000,
    async run(_payload, ctx) {
      const row = await db
        .updateTable('imports')
        .set({ status: 'running', started_at: sql`coalesce(started_at, ${ctx.clock.now()})`, error: null })
        .where('id', '=', ctx.job.id)
        .where('status', 'in', ['queued', 'running'])
        .returningAll()
        .executeTakeFirst();
      if (!row) return { skipped: 'import deleted or finished' };
      const parser = parserFor(row.format as ImportFormat);
      if (!parser) throw new PermanentJobError(`format ${row.format} is not supported by this build`);
      const file = row.artifact_key ? await deps.artifacts?.get(row.artifact_key) : null;
      if (!file) throw new PermanentJobError('the uploaded file is no longer in the artifact store');
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };
      const write = async (progress: ImportProgress) => {
        await db.updateTable('imports').set(countColumns(progress)).where('id', '=', row.id).execute();
        await ctx.heartbeat();
      };
      const { changedNodeIds, ...counts } = await applyImport(db, ctx.clock, scope, parser.parse(file), write, ctx.signal);
      // An import that changed the graph (AWS Config items) is audited at once, as a discovery job is.
      if (changedNodeIds.length) await auditWorkspace(deps, scope, row.id, ctx);
      return counts;
    },

    async onSucceeded(job, result, trx) {
      if ('skipped' in (result as object)) return;
      const key = await takeFileKey(trx, job.id);
      await trx
        .updateTable('imports')
        .set({ ...countColumns(result as ImportProgress), status: 'succeeded', finished_at: deps.clock.now() })
        .where('id', '=', job.id)
        .execute();
      await dropFile(key);
    },

    async onFailed(job, error, trx) {
      const key = await takeFileKey(trx, job.id);
      await trx
        .updateTable('imports')
        .set({ status: 'failed', error: error || 'import failed', finished_at: deps.clock.now() })
        .where('id', '=', job.id)
        .execute();
      await dropFile(key);
    },
  };
}

/** The stored file's key, cleared on the row: the file is deleted once the import has ended. */
async function takeFileKey(trx: Kysely<Database>, id: string): Promise<string | null> {
  const row = await trx.selectFrom('imports').select('artifact_key').where('id', '=', id).executeTakeFirst();
  if (row?.artifact_key) await trx.updateTable('imports').set({ artifact_key: null }).where('id', '=', id).execute();
  return row?.artifact_key ?? null;
}
