import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import type { AttestationStatus } from './control-statuses.js';
import '../tables.js';

/**
 * The stored attestation status of controls (control_attestations), which the compliance scores
 * read. The questionnaires module derives it from assessments and writes it through these, in its
 * own transactions; controls are keyed `framework:control_id`.
 */

export interface AttestationRecord {
  framework: string;
  control_id: string;
  status: AttestationStatus;
  assessment_id: string | null;
  attested_at: Date | null;
  expires_at: Date | null;
}

/** The stored records of the scope's controls among `keys` (`framework:control_id`); controls without one are absent. */
export function attestationRecords(db: Kysely<Database>, scope: Scope, keys: string[]) {
  return db
    .selectFrom('control_attestations')
    .select(['framework', 'control_id', 'status', 'assessment_id', 'expires_at'])
    .where(inWorkspace(scope))
    .where(sql<boolean>`(framework || ':' || control_id) = ANY(${keys}::text[])`)
    .execute();
}

/** Stores a control's record (inserted, or replacing the stored one) as of `now`. */
export async function saveAttestationRecord(trx: Kysely<Database>, scope: Scope, record: AttestationRecord, now: Date): Promise<void> {
  await trx
    .insertInto('control_attestations')
    .values({
      tenant_id: scope.tenantId,
      workspace_id: scope.workspaceId,
      framework: record.framework,
      control_id: record.control_id,
      status: record.status,
      assessment_id: record.assessment_id,
      attested_at: record.attested_at,
      expires_at: record.expires_at,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'framework', 'control_id']).doUpdateSet({
        status: record.status,
        assessment_id: record.assessment_id,
        attested_at: record.attested_at,
        expires_at: record.expires_at,
        updated_at: now,
      }),
    )
    .execute();
}

/** The controls an assessment's attestation currently holds (status attested), by framework and control id. */
export function controlsAttestedBy(db: Kysely<Database>, workspaceId: string, assessmentId: string) {
  return db
    .selectFrom('control_attestations')
    .select(['framework', 'control_id'])
    .where(inWorkspace({ workspaceId }))
    .where('assessment_id', '=', assessmentId)
    .where('status', '=', 'attested')
    .orderBy('framework')
    .orderBy('control_id')
    .execute();
}
