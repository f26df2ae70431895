import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { generateSecretToken, hashSecret } from '../../platform/auth/api-key-secret.js';
import { auditInScope, writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { AppError, conflict, notFound, unauthorized } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { sendTenantMail } from '../integrations/index.js';
import { ANSWERABLE, loadAssessment, type Respondent } from './assessment-service.js';
import { linkMail } from './respondent-mail.js';
import type { AssessmentLinkRow } from './tables.js';

/**
 * Outside respondents (issue 25): a link lets someone without an account (a supplier) answer one
 * assessment. The link's token is 40 random base62 characters after `cgr_` (about 238 bits); only its
 * SHA-256 is stored, so the token is shown once or mailed, and a lookup by its hash is the check (as
 * for API keys). It expires (14 days by default, at most 90) and can be revoked; either ends it at
 * once. Every use is in the audit log under the actor type `respondent_link` and the link's id.
 */
type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'version' | 'log' | 'tokenKey'>;

export const LINK_TOKEN_PREFIX = 'cgr_';
export const DEFAULT_LINK_DAYS = 14;
export const MAX_LINK_DAYS = 90;
const DAY_MS = 86_400_000;

export interface CreateLinkBody {
  name: string;
  recipient_email?: string;
  expires_in_days?: number;
}

/** Where a request came from, for the audit entries of a link's uses. */
export interface RequestMeta {
  ip: string;
  requestId: string;
}

export type LinkStatus = 'active' | 'expired' | 'revoked';

function statusOf(row: AssessmentLinkRow, now: Date): LinkStatus {
  if (row.revoked_at) return 'revoked';
  return new Date(row.expires_at) <= now ? 'expired' : 'active';
}

export function presentLink(row: AssessmentLinkRow, now: Date) {
  return {
    id: row.id,
    assessment_id: row.assessment_id,
    name: row.name,
    recipient_email: row.recipient_email,
    delivery: row.delivery,
    status: statusOf(row, now),
    created_by: row.created_by,
    created_by_name: row.created_by_name,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    revoked_by_name: row.revoked_by_name,
    last_used_at: row.last_used_at,
    use_count: row.use_count,
  };
}

const linkActor = (row: AssessmentLinkRow, meta: RequestMeta): AuditActor => ({
  type: 'respondent_link',
  id: row.id,
  name: `${row.name} (link)`,
  ip: meta.ip,
  requestId: meta.requestId,
});

/** The 401 of a link that ended: its own code, so the respondent knows to ask for a new link. */
const linkEnded = (code: 'LINK_EXPIRED' | 'LINK_REVOKED', message: string) => new AppError(401, code, message);

/** Mails a new link to its recipient, when the service knows its public URL and the tenant can send mail. */
async function mailLink(
  deps: Deps,
  context: RequestContext,
  assessment: { questionnaire_id: string; due_date: Parameters<typeof linkMail>[0]['dueDate'] },
  link: { recipient: string; name: string; url: string | null; expiresAt: Date },
): Promise<{ mailed: boolean; emailError: string | null }> {
  if (!link.url) return { mailed: false, emailError: 'CONTROLGRAPH_PUBLIC_URL is not set: the service mails no links without its public address' };
  const q = await deps.database.db.selectFrom('questionnaires').select(['title']).where('id', '=', assessment.questionnaire_id).executeTakeFirstOrThrow();
  const outcome = await sendTenantMail(
    deps,
    context.scope.tenantId,
    linkMail({ to: link.recipient, name: link.name, title: q.title, url: link.url, expiresAt: link.expiresAt, dueDate: assessment.due_date, sender: context.actor.name }),
  );
  if (outcome === null) return { mailed: false, emailError: 'the tenant has no active e-mail integration' };
  if (!outcome.ok) return { mailed: false, emailError: outcome.error ?? 'the mail was not accepted' };
  return { mailed: true, emailError: null };
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createRespondentLinks(deps: Deps) {
  const db = deps.database.db;

  async function answerableAssessment(scope: Scope, assessmentId: string) {
    const assessment = await loadAssessment(db, scope, assessmentId);
    if (!ANSWERABLE.includes(assessment.status)) throw conflict(`assessment is ${assessment.status}: it can no longer be answered, so no link can be sent for it`);
    return assessment;
  }

  async function linkOf(scope: Scope, assessmentId: string, linkId: string) {
    await loadAssessment(db, scope, assessmentId);
    const row = await db.selectFrom('assessment_links').selectAll().where(inScope(scope)).where('assessment_id', '=', assessmentId).where('id', '=', linkId).executeTakeFirst();
    if (!row) throw notFound('assessment link not found');
    return row;
  }

  return {
    /**
     * A new link. With a recipient_email and an active e-mail integration, the link is mailed and
     * never shown; otherwise (or when the mail fails) the answer carries the token and URL, once.
     * The URL starts with the configured public URL (CONTROLGRAPH_PUBLIC_URL), never with the
     * request's Host header: a forged Host would otherwise send a supplier's token to another site.
     * Without it nothing is mailed, and the token alone is returned (url null) for the console to
     * put behind its own address.
     */
    async create(context: RequestContext, assessmentId: string, body: CreateLinkBody) {
      const { scope } = context;
      const assessment = await answerableAssessment(scope, assessmentId);
      const now = deps.clock.now();
      const days = body.expires_in_days ?? DEFAULT_LINK_DAYS;
      const expiresAt = new Date(now.getTime() + days * DAY_MS);
      const token = generateSecretToken(LINK_TOKEN_PREFIX);
      // The fragment never reaches a server or its logs: the console reads it and sends it as a header.
      const url = deps.config.publicUrl ? `${deps.config.publicUrl}/respond#${token}` : null;
      const recipient = body.recipient_email?.trim() || null;
      const { mailed, emailError } = recipient ? await mailLink(deps, context, assessment, { recipient, name: body.name, url, expiresAt }) : { mailed: false, emailError: null };
      const row = await db.transaction().execute(async (trx) => {
        // Re-read under lock: the assessment may have been submitted or approved meanwhile.
        const current = await loadAssessment(trx, scope, assessmentId, true);
        if (!ANSWERABLE.includes(current.status)) throw conflict(`assessment is ${current.status}: it can no longer be answered, so no link can be sent for it`);
        const inserted = await trx
          .insertInto('assessment_links')
          .values({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            assessment_id: assessmentId,
            token_hash: hashSecret(token),
            name: body.name.trim(),
            recipient_email: recipient,
            delivery: mailed ? 'email' : 'copy',
            created_by: context.actor.userId,
            created_by_name: context.actor.name,
            created_at: now,
            expires_at: expiresAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditInScope(trx, deps.clock, context, {
          action: 'assessment_link.created',
          targetType: 'assessment_link',
          targetId: inserted.id,
          details: {
            assessment_id: assessmentId,
            name: inserted.name,
            recipient_email: recipient,
            delivery: inserted.delivery,
            expires_at: expiresAt.toISOString(),
            ...(emailError ? { email_error: emailError } : {}),
          },
        });
        return inserted;
      });
      return {
        link: presentLink(row, now),
        delivery: row.delivery,
        email_error: emailError,
        token: mailed ? null : token,
        url: mailed ? null : url,
      };
    },

    async list(scope: Scope, assessmentId: string, page: PageRequest) {
      await loadAssessment(db, scope, assessmentId);
      const base = db.selectFrom('assessment_links').where(inScope(scope)).where('assessment_id', '=', assessmentId);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const now = deps.clock.now();
      return toPage(
        rows.map((r) => presentLink(r, now)),
        Number(count.n),
        page,
      );
    },

    /** Ends a link at once; 409 when it was already revoked (an expired link can still be revoked). */
    async revoke(context: RequestContext, assessmentId: string, linkId: string) {
      const { scope } = context;
      await linkOf(scope, assessmentId, linkId);
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('assessment_links')
          .set({ revoked_at: now, revoked_by_name: context.actor.name })
          .where('id', '=', linkId)
          .where('revoked_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!updated) throw conflict('the link is already revoked');
        await auditInScope(trx, deps.clock, context, {
          action: 'assessment_link.revoked',
          targetType: 'assessment_link',
          targetId: linkId,
          details: { assessment_id: assessmentId, name: updated.name },
        });
        return updated;
      });
      return presentLink(row, now);
    },

    /**
     * The respondent a token stands for: only its own assessment passes `authorize` (any other is
     * "not found"). Unknown tokens are 401 UNAUTHORIZED; revoked and expired ones 401 LINK_REVOKED and
     * LINK_EXPIRED, each refusal audited in the link's tenant. A use counts and is timed on the link.
     */
    async resolve(token: string | null, meta: RequestMeta): Promise<{ link: AssessmentLinkRow; respondent: Respondent }> {
      if (!token) throw unauthorized('this route needs the link\'s token: send it as "Authorization: Bearer cgr_…"');
      const row =
        token.startsWith(LINK_TOKEN_PREFIX) && token.length <= 100
          ? await db.selectFrom('assessment_links').selectAll().where('token_hash', '=', hashSecret(token)).executeTakeFirst()
          : undefined;
      if (!row) throw unauthorized('unknown respondent link: ask the sender for a new link');
      const now = deps.clock.now();
      const status = statusOf(row, now);
      if (status !== 'active') {
        await writeAudit(db, deps.clock, linkActor(row, meta), {
          tenantId: row.tenant_id,
          workspaceId: row.workspace_id,
          action: 'assessment_link.refused',
          targetType: 'assessment_link',
          targetId: row.id,
          details: { assessment_id: row.assessment_id, reason: status },
        });
        throw status === 'revoked'
          ? linkEnded('LINK_REVOKED', 'this link was revoked: ask the sender for a new link')
          : linkEnded('LINK_EXPIRED', 'this link has expired: ask the sender for a new link');
      }
      const used = await db
        .updateTable('assessment_links')
        .set((eb) => ({ last_used_at: now, use_count: eb('use_count', '+', 1) }))
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const respondent: Respondent = {
        scope: { tenantId: row.tenant_id, workspaceId: row.workspace_id },
        userId: null,
        name: `${row.name} (link)`,
        audit: linkActor(row, meta),
        authorize: (assessment) => {
          if (assessment.id !== row.assessment_id) throw notFound('assessment not found');
        },
      };
      return { link: used, respondent };
    },

    /** Records a read through a link (answers, uploads and submissions are audited by their own actions). */
    async recordAccess(link: AssessmentLinkRow, meta: RequestMeta, what: string) {
      await writeAudit(db, deps.clock, linkActor(link, meta), {
        tenantId: link.tenant_id,
        workspaceId: link.workspace_id,
        action: 'assessment_link.accessed',
        targetType: 'assessment',
        targetId: link.assessment_id,
        details: { link_id: link.id, read: what },
      });
    },
  };
}
