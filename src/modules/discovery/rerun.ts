import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { Clock } from '../../platform/clock.js';
import { enqueueJob } from '../../platform/jobs/queue.js';
import { DISCOVERY_JOB, DISCOVERY_MAX_ATTEMPTS, emitJobEvent, type DiscoveryRow } from './discovery-service.js';
import type { PluginConfig } from './run-plugins.js';
import './tables.js';

/**
 * Why a discovery job cannot be repeated, or null when it can. A job runs once (starting it again is
 * 409), so a schedule repeats it as a new job with the same plugins and configuration; an uploaded
 * Terraform state is dropped when its job ends, so only a state read from S3 (state_uri) or a cloud
 * account can be read again.
 */
export function whyNotRepeatable(row: Pick<DiscoveryRow, 'plugins' | 'config'>): string | null {
  const tf = (row.config as PluginConfig)['terraform-state'];
  if (row.plugins.includes('terraform-state') && !tf?.state_uri) {
    return 'it reads an uploaded Terraform state, which is not kept after the job runs: schedule a job that reads the state from S3 (state_uri) or an AWS account';
  }
  return null;
}

/** The discovery job of the workspace a schedule repeats, or undefined. */
export function findDiscoveryJob(db: Kysely<Database>, scope: Scope, id: string): Promise<DiscoveryRow | undefined> {
  return db.selectFrom('discovery_jobs').selectAll().where('id', '=', id).where(inTenant(scope.tenantId)).where(inWorkspace(scope)).executeTakeFirst();
}

/**
 * Creates and queues a copy of a discovery job in the caller's transaction (job.created, as for a job
 * created through the API), returning its id; throws when the job is gone or cannot be repeated.
 */
export async function repeatDiscoveryJob(trx: Kysely<Database>, clock: Clock, scope: Scope, templateId: string, createdBy: string): Promise<string> {
  const template = await findDiscoveryJob(trx, scope, templateId);
  if (!template) throw new Error(`discovery job ${templateId} no longer exists`);
  const why = whyNotRepeatable(template);
  if (why) throw new Error(`discovery job ${templateId} cannot be repeated: ${why}`);
  const now = clock.now();
  const id = randomUUID();
  const job = await trx
    .insertInto('discovery_jobs')
    .values({
      id,
      tenant_id: scope.tenantId,
      workspace_id: scope.workspaceId,
      name: template.name,
      plugins: template.plugins,
      config: json(template.config),
      status: 'pending',
      warnings: json([]),
      attempts: 0,
      created_by: createdBy,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  // Created pending, then queued, as POST /jobs with start true: job.created says pending.
  await emitJobEvent(trx, clock, 'job.created', job);
  await enqueueJob(trx, clock, { id, kind: DISCOVERY_JOB, tenantId: scope.tenantId, workspaceId: scope.workspaceId, maxAttempts: DISCOVERY_MAX_ATTEMPTS });
  await trx.updateTable('discovery_jobs').set({ status: 'queued', queued_at: now }).where('id', '=', id).execute();
  return id;
}
