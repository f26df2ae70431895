import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { workspaceIs, tenantIs, type Scope } from '../../platform/db/scope.js';
import type { Clock } from '../../platform/clock.js';
import { writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { emitEvents } from '../../platform/events/outbox.js';
import { EXPIRING_SOON_DAYS } from '../compliance/index.js';
import { ATTESTATION_STATUSES, type AttestationStatus } from '../compliance/index.js';
import { attestationRecords, controlsAttestedBy, saveAttestationRecord } from '../compliance/index.js';
import './tables.js';
import type { AssessmentStatus } from './tables.js';

/**
 * The attestation status of controls (contracts section 5), kept per workspace in
 * control_attestations for the compliance scores. It is derived, never edited: from the assessments
 * of the published questionnaires whose questions map the control.
 *
 * - attested: an approved assessment's attestation is current (the latest expiry wins);
 * - otherwise the most advanced open assessment: submitted > changes_requested > in_progress >
 *   questionnaire_assigned (assigned, not yet answered);
 * - otherwise not_assessed (never assessed, or the attestation expired).
 *
 * A current attestation stays while a renewal assessment is under way, so re-assessing a control
 * never lowers the score before the old attestation runs out. Every change of assessments rewrites
 * the rows of the controls it touches in the same transaction; expiry is exact on read (the
 * compliance scores compare expires_at with the clock) and the sweeper below records it.
 */

export const CONTROL_STATUSES = ATTESTATION_STATUSES;
export type ControlStatus = AttestationStatus;

const DAY_MS = 86_400_000;
/** Reminders before an attestation expires (spec Limits), most urgent last. */
export const REMINDER_DAYS = [60, 30, 7] as const;

const OPEN_RANK: Partial<Record<AssessmentStatus, number>> = { assigned: 1, in_progress: 2, changes_requested: 3, submitted: 4 };
const OPEN_STATUS: Partial<Record<AssessmentStatus, ControlStatus>> = {
  assigned: 'questionnaire_assigned',
  in_progress: 'in_progress',
  changes_requested: 'changes_requested',
  submitted: 'submitted',
};

export interface ComputedControl {
  framework: string;
  control_id: string;
  status: ControlStatus;
  assessment_id: string | null;
  questionnaire_id: string | null;
  attested_at: Date | null;
  expires_at: Date | null;
}

export const keyOf = (c: { framework: string; control_id: string }) => `${c.framework}:${c.control_id}`;

interface Candidate {
  framework: string;
  control_id: string;
  assessment_id: string;
  questionnaire_id: string;
  status: AssessmentStatus;
  approved_at: Date | null;
  attestation_expires_at: Date | null;
  updated_at: Date;
}

/** The status of the given controls (all controls any questionnaire covers when keys is null) at `now`. */
export async function computeControls(db: Kysely<Database>, scope: Scope, keys: string[] | null, now: Date): Promise<Map<string, ComputedControl>> {
  // A control of a published questionnaire nobody was assigned yet is listed too (not_assessed):
  // such rows come without an assessment (status null).
  const rows = await sql<Omit<Candidate, 'status' | 'assessment_id'> & { status: AssessmentStatus | null; assessment_id: string | null }>`
    SELECT qc.framework, qc.control_id, a.id AS assessment_id, a.questionnaire_id, a.status, a.approved_at, a.attestation_expires_at, a.updated_at
    FROM questionnaire_controls qc
    JOIN questionnaires q ON q.id = qc.questionnaire_id AND ${workspaceIs(scope, 'q')} AND ${tenantIs(scope.tenantId, 'q')}
    LEFT JOIN assessments a ON a.questionnaire_id = qc.questionnaire_id
    WHERE ${workspaceIs(scope, 'qc')} AND (a.id IS NOT NULL OR q.status = 'published')
      ${keys ? sql`AND (qc.framework || ':' || qc.control_id) = ANY(${keys}::text[])` : sql``}`.execute(db);
  const result = new Map<string, ComputedControl>();
  const best = new Map<string, { attested: Candidate | null; open: Candidate | null }>();
  for (const found of rows.rows) {
    const key = keyOf(found);
    const entry = best.get(key) ?? { attested: null, open: null };
    best.set(key, entry);
    if (found.status === null || found.assessment_id === null) continue;
    const row = found as Candidate;
    if (row.status === 'approved') {
      const expires = new Date(row.attestation_expires_at!);
      if (expires > now && (!entry.attested || expires > new Date(entry.attested.attestation_expires_at!))) entry.attested = row;
    } else {
      const rank = OPEN_RANK[row.status]!;
      const current = entry.open ? OPEN_RANK[entry.open.status]! : 0;
      if (rank > current || (rank === current && entry.open && new Date(row.updated_at) > new Date(entry.open.updated_at))) entry.open = row;
    }
  }
  for (const key of keys ?? []) {
    if (!best.has(key)) {
      const i = key.indexOf(':');
      result.set(key, {
        framework: key.slice(0, i),
        control_id: key.slice(i + 1),
        status: 'not_assessed',
        assessment_id: null,
        questionnaire_id: null,
        attested_at: null,
        expires_at: null,
      });
    }
  }
  for (const [key, { attested, open }] of best) {
    const source = attested ?? open;
    const [framework, controlId] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    result.set(key, {
      framework,
      control_id: controlId,
      status: attested ? 'attested' : open ? OPEN_STATUS[open.status]! : 'not_assessed',
      assessment_id: source?.assessment_id ?? null,
      questionnaire_id: source?.questionnaire_id ?? null,
      attested_at: attested ? new Date(attested.approved_at!) : null,
      expires_at: attested ? new Date(attested.attestation_expires_at!) : null,
    });
  }
  return result;
}

export interface Transition {
  framework: string;
  control_id: string;
  from: ControlStatus;
  to: ControlStatus;
}

/** Serialises rewrites of a workspace's control rows (two approvals of one control at once). */
export function lockWorkspaceControls(trx: Kysely<Database>, scope: Scope) {
  return sql`SELECT pg_advisory_xact_lock(hashtext(${`control-attestations:${scope.workspaceId}`}))`.execute(trx);
}

/** The mapped controls of questionnaires (fixed at publish), as keys. */
export async function controlsOfQuestionnaires(db: Kysely<Database>, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('questionnaire_controls').select(['framework', 'control_id']).where('questionnaire_id', 'in', ids).execute();
  return [...new Set(rows.map(keyOf))];
}

/**
 * Rewrites the control_attestations rows of the controls to their computed status, in the caller's
 * transaction; returns the changes. A control with no row and nothing to report gets no row.
 */
export async function refreshControls(trx: Kysely<Database>, scope: Scope, keys: string[], now: Date): Promise<Transition[]> {
  if (keys.length === 0) return [];
  await lockWorkspaceControls(trx, scope);
  const computed = await computeControls(trx, scope, keys, now);
  const existing = new Map((await attestationRecords(trx, scope, keys)).map((r) => [keyOf(r), r]));
  const transitions: Transition[] = [];
  for (const key of keys) {
    const next = computed.get(key)!;
    const row = existing.get(key);
    // The stored status: an attestation whose expiry passed still reads "attested" here, so the
    // sweeper sees the controls it ends (every reader already treats them as not attested).
    const from: ControlStatus = row ? row.status : 'not_assessed';
    const sameRow =
      row &&
      row.status === next.status &&
      row.assessment_id === next.assessment_id &&
      (row.expires_at ? new Date(row.expires_at).getTime() : null) === (next.expires_at ? next.expires_at.getTime() : null);
    if (sameRow || (!row && next.status === 'not_assessed')) continue;
    await saveAttestationRecord(trx, scope, next, now);
    if (from !== next.status) transitions.push({ framework: next.framework, control_id: next.control_id, from, to: next.status });
  }
  return transitions;
}

/** Which reminder stage (days before expiry) is due at `now`; stages that began before the approval never apply. */
export function dueReminderStage(approvedAt: Date, expiresAt: Date, now: Date): number | null {
  if (now >= expiresAt) return null;
  let due: number | null = null;
  for (const days of REMINDER_DAYS) {
    const at = expiresAt.getTime() - days * DAY_MS;
    if (at > approvedAt.getTime() && now.getTime() >= at) due = days;
  }
  return due;
}

export function expiryMarks(status: ControlStatus, expiresAt: Date | null, now: Date) {
  if (status !== 'attested' || !expiresAt) return { days_until_expiry: null, expiring_soon: false, expiry_warning: null };
  const ms = expiresAt.getTime() - now.getTime();
  const days = Math.ceil(ms / DAY_MS);
  const warning = ms <= 7 * DAY_MS ? 'urgent' : ms <= 30 * DAY_MS ? 'warning' : ms <= 60 * DAY_MS ? 'notice' : null;
  return { days_until_expiry: days, expiring_soon: ms <= EXPIRING_SOON_DAYS * DAY_MS, expiry_warning: warning as 'urgent' | 'warning' | 'notice' | null };
}

type Deps = Pick<AppDeps, 'database' | 'clock'>;

const SWEEPER: AuditActor = { type: 'system', id: null, name: 'attestation-expiry-sweeper' };
const REMINDER: AuditActor = { type: 'system', id: null, name: 'attestation-reminders' };

/**
 * Records the end of attestations whose expiry passed: once per approved assessment (claimed with
 * expiry_recorded_at), it rewrites the controls' rows (back to not_assessed, or to the state of a
 * renewal under way), writes the audit log and emits attestation.expired naming the controls that
 * stopped being attested. The score already stopped counting them at the exact moment.
 */
export async function sweepExpiredAttestations(deps: Deps, limit = 500): Promise<number> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const due = await db
    .selectFrom('assessments as a')
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .select(['a.id', 'a.tenant_id', 'a.workspace_id', 'a.questionnaire_id', 'a.attestation_expires_at', 'a.assignee_id', 'q.title'])
    .where('a.status', '=', 'approved')
    .where('a.expiry_recorded_at', 'is', null)
    .where('a.attestation_expires_at', '<=', now)
    .orderBy('a.attestation_expires_at')
    .limit(limit)
    .execute();
  let recorded = 0;
  for (const row of due) {
    await db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('assessments')
        .set({ expiry_recorded_at: now })
        .where('id', '=', row.id)
        .where('expiry_recorded_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!claimed) return;
      recorded++;
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };
      const transitions = await refreshControls(trx, scope, await controlsOfQuestionnaires(trx, [row.questionnaire_id]), now);
      const ended = transitions.filter((t) => t.from === 'attested' && t.to !== 'attested');
      const expiredAt = new Date(row.attestation_expires_at!).toISOString();
      await emitEvents(trx, deps.clock, [
        {
          tenantId: row.tenant_id,
          workspaceId: row.workspace_id,
          type: 'attestation.expired',
          data: {
            assessment_id: row.id,
            questionnaire_id: row.questionnaire_id,
            questionnaire_title: row.title,
            expired_at: expiredAt,
            controls: ended.map((t) => ({ framework: t.framework, control_id: t.control_id, status: t.to })),
          },
        },
      ]);
      await writeAudit(trx, deps.clock, SWEEPER, {
        tenantId: row.tenant_id,
        workspaceId: row.workspace_id,
        action: 'attestation.expired',
        targetType: 'assessment',
        targetId: row.id,
        details: { expired_at: expiredAt, controls: ended.map((t) => ({ control: keyOf(t), from: t.from, to: t.to })) },
      });
    });
  }
  return recorded;
}

/**
 * Sends the expiry reminders 60, 30 and 7 days before an attestation ends, each at most once per
 * approved assessment: the conditional update of reminder_stage is the claim, and the event is
 * written in the same transaction. A late run sends only the most urgent due stage (the earlier
 * ones are passed over, not sent late); an assessment whose controls were all re-attested by a
 * newer approval records the stage without an event.
 */
export async function sendExpiryReminders(deps: Deps, limit = 500): Promise<number> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const candidates = await db
    .selectFrom('assessments as a')
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .leftJoin('users as u', 'u.id', 'a.assignee_id')
    .select([
      'a.id',
      'a.tenant_id',
      'a.workspace_id',
      'a.questionnaire_id',
      'a.approved_at',
      'a.attestation_expires_at',
      'a.reminder_stage',
      'a.assignee_id',
      'a.reviewed_by',
      'u.username as assignee',
      'q.title',
      'q.created_by',
    ])
    .where('a.status', '=', 'approved')
    .where('a.expiry_recorded_at', 'is', null)
    .where('a.attestation_expires_at', '>', now)
    .where('a.attestation_expires_at', '<=', new Date(now.getTime() + Math.max(...REMINDER_DAYS) * DAY_MS))
    .where((eb) => eb.or([eb('a.reminder_stage', 'is', null), eb('a.reminder_stage', '>', Math.min(...REMINDER_DAYS))]))
    .orderBy('a.attestation_expires_at')
    .limit(limit)
    .execute();
  let sent = 0;
  for (const row of candidates) {
    const expiresAt = new Date(row.attestation_expires_at!);
    const stage = dueReminderStage(new Date(row.approved_at!), expiresAt, now);
    if (stage === null || (row.reminder_stage !== null && row.reminder_stage <= stage)) continue;
    await db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('assessments')
        .set({ reminder_stage: stage })
        .where('id', '=', row.id)
        .where((eb) => eb.or([eb('reminder_stage', 'is', null), eb('reminder_stage', '>', stage)]))
        .returning('id')
        .executeTakeFirst();
      if (!claimed) return;
      const covered = await controlsAttestedBy(trx, row.workspace_id, row.id);
      if (covered.length === 0) return;
      sent++;
      const level = stage === 7 ? 'urgent' : stage === 30 ? 'warning' : 'notice';
      const creator = /^user:(.+)$/.exec(row.created_by)?.[1] ?? null;
      await emitEvents(trx, deps.clock, [
        {
          tenantId: row.tenant_id,
          workspaceId: row.workspace_id,
          type: 'attestation.expiring',
          data: {
            assessment_id: row.id,
            questionnaire_id: row.questionnaire_id,
            questionnaire_title: row.title,
            days_before: stage,
            level,
            expires_at: expiresAt.toISOString(),
            controls: covered.map(keyOf),
            owner: { user_id: row.assignee_id, username: row.assignee },
            notify_user_ids: [...new Set([row.assignee_id, creator, row.reviewed_by].filter((v): v is string => !!v))],
          },
        },
      ]);
      await writeAudit(trx, deps.clock, REMINDER, {
        tenantId: row.tenant_id,
        workspaceId: row.workspace_id,
        action: 'attestation.reminder_sent',
        targetType: 'assessment',
        targetId: row.id,
        details: { days_before: stage, expires_at: expiresAt.toISOString(), controls: covered.length },
      });
    });
  }
  return sent;
}

export type { Clock };
