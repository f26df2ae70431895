import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { emitEvents } from '../../platform/events/outbox.js';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { LIMITS, parseAnswer, mappedControls, type Question } from './questions.js';
import { keyOf, refreshControls, type Transition } from './control-status.js';
import { presentAssessment, presentAssessments } from './assessment-view.js';
import type { AssessmentRow, AssessmentStatus, Gap, GapSeverity, QuestionnaireRow } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface ResponseItem {
  question_id: string;
  answer?: string;
  notes?: string;
}

export interface ReviewBody {
  review_status: 'approved' | 'rejected' | 'approve' | 'reject';
  notes?: string;
  gaps?: Array<{ question_id: string; severity?: GapSeverity; notes?: string }>;
}

export interface AssessmentFilter {
  status?: AssessmentStatus;
  questionnaire_id?: string;
  assignee_id?: string;
}

const DAY_MS = 86_400_000;
/** Statuses in which the assignee may still answer. */
export const ANSWERABLE: AssessmentStatus[] = ['assigned', 'in_progress', 'changes_requested'];

/**
 * Separation of duties for outside respondents: whoever was shown a link's token (delivery `copy`)
 * could have answered through it, so they do not review what was answered that way. A link that was
 * e-mailed was never seen by its creator.
 */
async function answeredThroughOwnLink(db: Kysely<Database>, assessmentId: string, userId: string): Promise<boolean> {
  const link = await db
    .selectFrom('assessment_links')
    .select('id')
    .where('assessment_id', '=', assessmentId)
    .where('created_by', '=', userId)
    .where('delivery', '=', 'copy')
    .where('use_count', '>', 0)
    .limit(1)
    .executeTakeFirst();
  return Boolean(link);
}

/** The spec's 400 for answering a submitted or approved assessment, in one place (respond and upload). */
export function assertAnswerable(row: Pick<AssessmentRow, 'status'>): void {
  if (!ANSWERABLE.includes(row.status)) throw badRequest(`assessment is ${row.status}: responses are read-only`);
}

/** Only the assignee answers; permission assessment:read is enough for that (a read-only user may be assigned). */
export function assertAssignee(context: RequestContext, row: Pick<AssessmentRow, 'assignee_id'>): void {
  if (context.actor.userId !== row.assignee_id) throw forbidden('only the assignee may answer this assessment');
}

/**
 * Who answers an assessment: the signed-in assignee, or an outside respondent holding a link to it
 * (respondent-links.ts). `authorize` refuses anyone else before anything is read or written.
 */
export interface Respondent {
  scope: Scope;
  /** The user recorded as the author of answers and files (null for a link). */
  userId: string | null;
  name: string;
  audit: AuditActor;
  authorize(row: AssessmentRow): void;
}

export function assigneeRespondent(context: RequestContext): Respondent {
  return {
    scope: context.scope,
    userId: context.actor.userId,
    name: context.actor.name,
    audit: actorOf(context),
    authorize: (row) => assertAssignee(context, row),
  };
}

export async function loadAssessment(trx: Kysely<Database>, scope: Scope, id: string, forUpdate = false): Promise<AssessmentRow> {
  let query = trx.selectFrom('assessments').selectAll().where(inScope(scope)).where('id', '=', id);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('assessment not found');
  return row;
}

async function questionnaireOf(trx: Kysely<Database>, row: AssessmentRow): Promise<QuestionnaireRow> {
  return trx.selectFrom('questionnaires').selectAll().where('id', '=', row.questionnaire_id).executeTakeFirstOrThrow();
}

const transitionsDetail = (transitions: Transition[]) => transitions.map((t) => ({ control: keyOf(t), from: t.from, to: t.to }));

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createAssessmentService(deps: Deps) {
  const db = deps.database.db;

  async function page(scope: Scope, filter: AssessmentFilter & { reviewQueueFor?: string | null }, request: PageRequest, order: 'created' | 'submitted' = 'created') {
    let base = db.selectFrom('assessments').where(inScope(scope));
    if (filter.status) base = base.where('status', '=', filter.status);
    if (filter.questionnaire_id) base = base.where('questionnaire_id', '=', filter.questionnaire_id);
    if (filter.assignee_id) base = base.where('assignee_id', '=', filter.assignee_id);
    if (filter.reviewQueueFor !== undefined) {
      const me = filter.reviewQueueFor;
      base = base.where('status', '=', 'submitted');
      if (me) base = base.where('assignee_id', '!=', me).where((eb) => eb.or([eb('reviewer_id', 'is', null), eb('reviewer_id', '=', me)]));
      else base = base.where('reviewer_id', 'is', null);
    }
    let query = base.selectAll();
    query = order === 'submitted' ? query.orderBy('submitted_at', 'asc').orderBy('id') : query.orderBy('created_at', 'desc').orderBy('id', 'desc');
    const [rows, count] = await Promise.all([
      query.limit(request.perPage).offset(offsetOf(request)).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return toPage(await presentAssessments(db, rows, deps.clock.now()), Number(count.n), request);
  }

  async function audit(trx: Kysely<Database>, who: RequestContext | Respondent, action: string, id: string, details: Record<string, unknown>) {
    await writeAudit(trx, deps.clock, 'audit' in who ? who.audit : actorOf(who), {
      tenantId: who.scope.tenantId,
      workspaceId: who.scope.workspaceId,
      action,
      targetType: 'assessment',
      targetId: id,
      details,
    });
  }

  /** Moves an assessment to a status and its controls with it, in the caller's transaction. */
  async function move(trx: Kysely<Database>, scope: Scope, row: AssessmentRow, q: QuestionnaireRow, set: Partial<AssessmentRow>, now: Date) {
    const { gaps, ...rest } = set;
    const updated = await trx
      .updateTable('assessments')
      .set({ ...rest, ...(gaps ? { gaps: json(gaps) } : {}), updated_at: now })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const transitions = set.status && set.status !== row.status ? await refreshControls(trx, scope, mappedControls(q.questions).map(keyOf), now) : [];
    return { updated, transitions };
  }

  return {
    list: (scope: Scope, filter: AssessmentFilter, request: PageRequest) => page(scope, filter, request),

    /** The respondent view: the caller's own assessments (none for an API key, which is nobody's assignee). */
    mine(context: RequestContext, filter: Omit<AssessmentFilter, 'assignee_id'>, request: PageRequest) {
      if (!context.actor.userId) return Promise.resolve(toPage([], 0, request));
      return page(context.scope, { ...filter, assignee_id: context.actor.userId }, request);
    },

    /** Submitted assessments the caller may review (not their own; unassigned or assigned to them), oldest first. */
    reviewQueue(context: RequestContext, request: PageRequest) {
      return page(context.scope, { reviewQueueFor: context.actor.userId }, request, 'submitted');
    },

    async get(scope: Scope, id: string) {
      return presentAssessment(db, await loadAssessment(db, scope, id), deps.clock.now());
    },

    /**
     * Saves answers incrementally: each item sets the answer and/or notes of one question; an empty
     * answer clears it. Every item is checked against its question's type before anything is saved
     * (400 listing the problems). Required questions are enforced at submit, not here.
     */
    respond(context: RequestContext, id: string, items: ResponseItem[]) {
      return this.respondAs(assigneeRespondent(context), id, items);
    },

    async respondAs(respondent: Respondent, id: string, items: ResponseItem[]) {
      const { scope } = respondent;
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const current = await loadAssessment(trx, scope, id, true);
        respondent.authorize(current);
        assertAnswerable(current);
        const q = await questionnaireOf(trx, current);
        const questions = new Map(q.questions.map((x) => [x.id, x]));
        const errors: Array<{ question_id: string; message: string }> = [];
        const seen = new Set<string>();
        const evidenceWanted: Array<{ question: Question; ids: string[] }> = [];
        for (const item of items) {
          const question = questions.get(item.question_id);
          const fail = (message: string) => errors.push({ question_id: item.question_id, message });
          if (!question) {
            fail('no such question in this questionnaire');
            continue;
          }
          if (seen.has(item.question_id)) fail('question answered twice in one request');
          seen.add(item.question_id);
          if (item.answer === undefined && item.notes === undefined) fail('give an answer, notes, or both');
          if (item.notes !== undefined && item.notes.length > LIMITS.notes) fail(`notes have at most ${LIMITS.notes} characters`);
          if (item.answer) {
            const parsed = parseAnswer(question, item.answer);
            if (!parsed.ok) fail(parsed.message);
            else if (parsed.evidenceIds.length) evidenceWanted.push({ question, ids: parsed.evidenceIds });
          }
        }
        for (const { question, ids } of evidenceWanted) {
          const found = await trx
            .selectFrom('attestation_evidence')
            .select('id')
            .where('assessment_id', '=', id)
            .where('question_id', '=', question.id)
            .where('id', 'in', ids)
            .execute();
          const known = new Set(found.map((f) => f.id));
          const missing = ids.filter((e) => !known.has(e));
          if (missing.length) errors.push({ question_id: question.id, message: `evidence ${missing.join(', ')} was not uploaded to this assessment and question` });
        }
        if (errors.length) throw badRequest(`invalid response for question "${errors[0]!.question_id}": ${errors[0]!.message}`, { errors });

        for (const item of items) {
          await trx
            .insertInto('assessment_responses')
            .values({ assessment_id: id, question_id: item.question_id, answer: item.answer ?? '', notes: item.notes ?? '', updated_at: now, updated_by: respondent.userId })
            .onConflict((oc) =>
              oc.columns(['assessment_id', 'question_id']).doUpdateSet({
                ...(item.answer !== undefined ? { answer: item.answer } : {}),
                ...(item.notes !== undefined ? { notes: item.notes } : {}),
                updated_at: now,
                updated_by: respondent.userId,
              }),
            )
            .execute();
        }
        const { updated, transitions } = await move(trx, scope, current, q, { status: 'in_progress' }, now);
        await audit(trx, respondent, 'assessment.responded', id, {
          question_ids: items.map((i) => i.question_id),
          ...(current.status !== 'in_progress' ? { status: { from: current.status, to: 'in_progress' } } : {}),
          ...(transitions.length ? { controls: transitionsDetail(transitions) } : {}),
        });
        return updated;
      });
      return presentAssessment(db, row, now);
    },

    /** Submits for review: every required question answered (400 naming the missing ones); read-only afterwards. */
    submit(context: RequestContext, id: string) {
      return this.submitAs(assigneeRespondent(context), id);
    },

    async submitAs(respondent: Respondent, id: string) {
      const { scope } = respondent;
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const current = await loadAssessment(trx, scope, id, true);
        respondent.authorize(current);
        if (!ANSWERABLE.includes(current.status)) throw conflict(`assessment is already ${current.status}`);
        const q = await questionnaireOf(trx, current);
        const answered = new Set(
          (await trx.selectFrom('assessment_responses').select('question_id').where('assessment_id', '=', id).where('answer', '!=', '').execute()).map((r) => r.question_id),
        );
        const missing = q.questions.filter((x) => x.required && !answered.has(x.id)).map((x) => x.id);
        if (missing.length) throw badRequest(`required questions are not answered: ${missing.join(', ')}`, { missing });
        const { updated, transitions } = await move(trx, scope, current, q, { status: 'submitted', submitted_at: now }, now);
        await audit(trx, respondent, 'assessment.submitted', id, { status: { from: current.status, to: 'submitted' }, controls: transitionsDetail(transitions) });
        await emitEvents(trx, deps.clock, [
          {
            tenantId: scope.tenantId,
            workspaceId: scope.workspaceId,
            type: 'assessment.submitted',
            data: { assessment_id: id, questionnaire_id: q.id, questionnaire_title: q.title, assignee_id: current.assignee_id, reviewer_id: current.reviewer_id },
          },
        ]);
        return updated;
      });
      return presentAssessment(db, row, now);
    },

    /**
     * approved: read-only, and every control the questions map to is attested for the
     * questionnaire's attestation_validity_days. rejected: changes requested, back to the respondent
     * (notes required, saying what to change). Never one's own assessment; a named reviewer alone.
     */
    async review(context: RequestContext, id: string, body: ReviewBody) {
      const { scope } = context;
      const now = deps.clock.now();
      const decision = body.review_status === 'approved' || body.review_status === 'approve' ? 'approved' : 'rejected';
      const notes = body.notes?.trim() ?? '';
      const row = await db.transaction().execute(async (trx) => {
        const current = await loadAssessment(trx, scope, id, true);
        if (context.actor.userId && context.actor.userId === current.assignee_id) throw forbidden('you cannot review your own assessment');
        if (current.reviewer_id && context.actor.userId !== current.reviewer_id) throw forbidden('this assessment is assigned to another reviewer');
        if (context.actor.userId && (await answeredThroughOwnLink(trx, id, context.actor.userId))) {
          throw forbidden('you were shown a respondent link of this assessment that has been used: another reviewer must review it');
        }
        if (current.status !== 'submitted') throw conflict(`only submitted assessments can be reviewed (this one is ${current.status})`);
        if (decision === 'rejected' && !notes) throw badRequest('notes are required when rejecting: say what needs to change');
        const q = await questionnaireOf(trx, current);
        const ids = new Set(q.questions.map((x) => x.id));
        const gaps: Gap[] = [];
        for (const g of body.gaps ?? []) {
          if (!ids.has(g.question_id)) throw badRequest(`gap names unknown question "${g.question_id}"`);
          if (gaps.some((x) => x.question_id === g.question_id)) throw badRequest(`gap for question "${g.question_id}" given twice`);
          gaps.push({ question_id: g.question_id, severity: g.severity ?? 'MEDIUM', notes: g.notes?.trim() ?? '' });
        }
        const expiresAt = new Date(now.getTime() + q.attestation_validity_days * DAY_MS);
        const reviewFields = { reviewed_at: now, reviewed_by: context.actor.userId, review_status: decision, review_notes: notes, gaps } as const;
        const { updated, transitions } =
          decision === 'approved'
            ? await move(
                trx,
                scope,
                current,
                q,
                { ...reviewFields, status: 'approved', approved_at: now, attestation_expires_at: expiresAt, reminder_stage: null, expiry_recorded_at: null },
                now,
              )
            : await move(trx, scope, current, q, { ...reviewFields, status: 'changes_requested' }, now);
        await trx
          .insertInto('assessment_reviews')
          .values({
            id: randomUUID(),
            assessment_id: id,
            review_status: decision,
            notes,
            gaps: json(gaps),
            reviewer_id: context.actor.userId,
            reviewer_name: context.actor.name,
            created_at: now,
          })
          .execute();
        const attested = decision === 'approved' ? mappedControls(q.questions).map(keyOf) : [];
        await audit(trx, context, decision === 'approved' ? 'assessment.approved' : 'assessment.rejected', id, {
          status: { from: current.status, to: updated.status },
          notes,
          gaps: gaps.map((g) => g.question_id),
          ...(decision === 'approved' ? { attestation_expires_at: expiresAt.toISOString(), attested_controls: attested } : {}),
          controls: transitionsDetail(transitions),
        });
        await emitEvents(trx, deps.clock, [
          {
            tenantId: scope.tenantId,
            workspaceId: scope.workspaceId,
            type: decision === 'approved' ? 'assessment.approved' : 'assessment.changes_requested',
            data: {
              assessment_id: id,
              questionnaire_id: q.id,
              questionnaire_title: q.title,
              assignee_id: current.assignee_id,
              reviewer_id: context.actor.userId,
              notes,
              ...(decision === 'approved' ? { attestation_expires_at: expiresAt.toISOString(), controls: attested } : {}),
            },
          },
        ]);
        return updated;
      });
      return presentAssessment(db, row, now);
    },
  };
}
