import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { emitEvents } from '../../platform/events/outbox.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import {
  MAPPING_FRAMEWORKS,
  isCalendarDate,
  normalizeQuestion,
  normalizeQuestions,
  mappedControls,
  splitMapping,
  nextQuestionId,
  type Question,
  type QuestionInput,
} from './questions.js';
import { unknownFramework } from '../compliance/index.js';
import { templateIn, templates, type Language } from './templates.js';
import { actorRef, canReview, resolveMembers, today } from './people.js';
import { keyOf, refreshControls } from './control-status.js';
import { presentAssessments } from './assessment-view.js';
import type { QuestionnaireRow, QuestionnaireStatus } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface QuestionnaireBody {
  title?: string;
  description?: string;
  questions?: QuestionInput[];
  assignees?: string[];
  due_date?: string | null;
  framework?: string | null;
  attestation_validity_days?: number;
}

export interface FromTemplateBody {
  template_id: string;
  title?: string;
  description?: string;
  assignees?: string[];
  due_date?: string | null;
  framework?: string | null;
  lang?: string;
  attestation_validity_days?: number;
}

export interface AssignBody {
  assignees?: string[];
  reviewer_id?: string | null;
  due_date?: string | null;
}

const DEFAULT_VALIDITY_DAYS = 365;
const NEW_VERSION_HINT = 'create a new version (POST /questionnaires/{qID}/versions) to change it';

/** The frameworks a question list maps to, in first-use order. */
function frameworksOf(questions: Question[]): string[] {
  return [...new Set(questions.flatMap((q) => q.control_ids.map((m) => splitMapping(m).framework)))];
}

export function presentQuestionnaire(row: QuestionnaireRow) {
  return {
    id: row.id,
    family_id: row.family_id,
    version: row.version,
    previous_version_id: row.previous_version_id,
    title: row.title,
    description: row.description,
    framework: row.framework,
    frameworks: frameworksOf(row.questions),
    template_id: row.template_id,
    template_version: row.template_version,
    lang: row.lang,
    status: row.status,
    questions: row.questions,
    question_count: row.questions.length,
    assignees: row.assignees,
    due_date: row.due_date,
    attestation_validity_days: row.attestation_validity_days,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    published_at: row.published_at,
    archived_at: row.archived_at,
  };
}

function checkDueDate(value: string | null | undefined, now: Date): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (!isCalendarDate(value)) throw badRequest('due_date must be a date YYYY-MM-DD');
  if (value < today(now)) throw badRequest('due_date must not be in the past');
  return value;
}

function checkFramework(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (!(MAPPING_FRAMEWORKS as readonly string[]).includes(value)) throw unknownFramework(value, MAPPING_FRAMEWORKS);
  return value;
}

function checkTitle(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const title = value.trim();
  if (!title) throw badRequest('title must not be empty');
  return title;
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createQuestionnaireService(deps: Deps) {
  const db = deps.database.db;

  async function load(trx: Kysely<Database>, scope: Scope, id: string, forUpdate = false): Promise<QuestionnaireRow> {
    let query = trx.selectFrom('questionnaires').selectAll().where(inScope(scope)).where('id', '=', id);
    if (forUpdate) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('questionnaire not found');
    return row;
  }

  function requireDraft(row: QuestionnaireRow, what: string) {
    if (row.status === 'draft') return;
    throw conflict(`questionnaire is ${row.status}: ${what} only while it is a draft; ${NEW_VERSION_HINT}`);
  }

  async function audit(trx: Kysely<Database>, context: RequestContext, action: string, id: string, details: Record<string, unknown> = {}) {
    await auditInScope(trx, deps.clock, context, {
      action,
      targetType: 'questionnaire',
      targetId: id,
      details,
    });
  }

  type DraftValues = Omit<
    QuestionnaireRow,
    'id' | 'tenant_id' | 'workspace_id' | 'family_id' | 'version' | 'previous_version_id' | 'status' | 'created_by' | 'created_at' | 'updated_at' | 'published_at' | 'archived_at'
  >;
  type Lineage = Pick<QuestionnaireRow, 'family_id' | 'version' | 'previous_version_id'>;

  /** A new draft in the request's workspace: the first version of its own family, or the next version of `lineage`. */
  async function insertDraft(trx: Kysely<Database>, context: RequestContext, now: Date, values: DraftValues, lineage?: Lineage): Promise<QuestionnaireRow> {
    const id = randomUUID();
    return trx
      .insertInto('questionnaires')
      .values({
        ...values,
        id,
        tenant_id: context.scope.tenantId,
        workspace_id: context.scope.workspaceId,
        ...(lineage ?? { family_id: id, version: 1, previous_version_id: null }),
        status: 'draft',
        questions: json(values.questions),
        created_by: actorRef(context),
        created_at: now,
        updated_at: now,
        published_at: null,
        archived_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async function insert(context: RequestContext, values: DraftValues) {
    return db.transaction().execute(async (trx) => {
      const row = await insertDraft(trx, context, deps.clock.now(), values);
      await audit(trx, context, 'questionnaire.created', row.id, { title: row.title, template_id: row.template_id, questions: row.questions.length });
      return row;
    });
  }

  return {
    listTemplates(framework: string | undefined, lang: Language, page: PageRequest) {
      checkFramework(framework);
      const all = [...templates().keys()]
        .map((id) => templateIn(id, lang)!)
        .filter((t) => !framework || t.frameworks.includes(framework))
        .map((t) => ({
          id: t.id,
          lang: t.lang,
          version: t.version,
          title: t.title,
          description: t.description,
          framework: t.framework,
          frameworks: t.frameworks,
          attestation_validity_days: t.attestation_validity_days,
          question_count: t.questions.length,
          references: t.references,
        }));
      const start = offsetOf(page);
      return { ...toPage(all.slice(start, start + page.perPage), all.length, page), lang };
    },

    getTemplate(id: string, lang: Language) {
      const template = templateIn(id, lang);
      if (!template) throw notFound(`template "${id}" not found`);
      return template;
    },

    async create(context: RequestContext, body: QuestionnaireBody) {
      const now = deps.clock.now();
      const title = checkTitle(body.title);
      if (!title) throw badRequest('title is required');
      const questions = normalizeQuestions(body.questions ?? []);
      const assignees = await resolveMembers(db, context.scope.tenantId, body.assignees ?? [], 'assignee');
      const framework = checkFramework(body.framework) ?? frameworksOf(questions)[0] ?? null;
      const row = await insert(context, {
        title,
        description: body.description?.trim() ?? '',
        framework,
        template_id: null,
        template_version: null,
        lang: 'en',
        questions,
        assignees: assignees.map((a) => a.id),
        due_date: checkDueDate(body.due_date, now) ?? null,
        attestation_validity_days: body.attestation_validity_days ?? DEFAULT_VALIDITY_DAYS,
      });
      return presentQuestionnaire(row);
    },

    async fromTemplate(context: RequestContext, body: FromTemplateBody, lang: Language) {
      const now = deps.clock.now();
      const template = templateIn(body.template_id, lang);
      if (!template) throw badRequest(`unknown template_id "${body.template_id}"`);
      const assignees = await resolveMembers(db, context.scope.tenantId, body.assignees ?? [], 'assignee');
      const row = await insert(context, {
        title: checkTitle(body.title) ?? template.title,
        description: body.description?.trim() || template.description,
        framework: checkFramework(body.framework) ?? template.framework,
        template_id: template.id,
        template_version: template.version,
        lang: template.lang,
        questions: structuredClone(template.questions),
        assignees: assignees.map((a) => a.id),
        due_date: checkDueDate(body.due_date, now) ?? null,
        attestation_validity_days: body.attestation_validity_days ?? template.attestation_validity_days,
      });
      return presentQuestionnaire(row);
    },

    async list(scope: Scope, filter: { status?: QuestionnaireStatus; framework?: string; template_id?: string }, page: PageRequest) {
      let base = db.selectFrom('questionnaires').where(inScope(scope));
      if (filter.status) base = base.where('status', '=', filter.status);
      if (filter.template_id) base = base.where('template_id', '=', filter.template_id);
      if (filter.framework) {
        const fw = checkFramework(filter.framework)!;
        base = base.where((eb) =>
          eb.or([
            eb('framework', '=', fw),
            sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements(questions) q, jsonb_array_elements_text(q->'control_ids') m WHERE m LIKE ${`${fw}:%`})`,
          ]),
        );
      }
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(presentQuestionnaire), Number(count.n), page);
    },

    async get(scope: Scope, id: string) {
      return presentQuestionnaire(await load(db, scope, id));
    },

    async update(context: RequestContext, id: string, body: QuestionnaireBody) {
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const current = await load(trx, context.scope, id, true);
        if (current.status === 'archived') throw conflict('questionnaire is archived and cannot be changed');
        const structural = (['questions', 'framework', 'attestation_validity_days'] as const).filter((k) => body[k] !== undefined);
        if (current.status !== 'draft' && structural.length) {
          throw conflict(`questionnaire is ${current.status}: ${structural.join(', ')} change only while it is a draft; ${NEW_VERSION_HINT}`);
        }
        const changes: Partial<QuestionnaireRow> & { questions?: Question[] } = {};
        const title = checkTitle(body.title);
        if (title !== undefined) changes.title = title;
        if (body.description !== undefined) changes.description = body.description.trim();
        if (body.due_date !== undefined) changes.due_date = checkDueDate(body.due_date, now) ?? null;
        if (body.framework !== undefined) changes.framework = checkFramework(body.framework) ?? null;
        if (body.attestation_validity_days !== undefined) changes.attestation_validity_days = body.attestation_validity_days;
        if (body.assignees !== undefined) changes.assignees = (await resolveMembers(trx, context.scope.tenantId, body.assignees, 'assignee')).map((a) => a.id);
        if (body.questions !== undefined) changes.questions = normalizeQuestions(body.questions);
        const { questions, ...rest } = changes;
        const updated = await trx
          .updateTable('questionnaires')
          .set({ ...rest, ...(questions ? { questions: json(questions) } : {}), updated_at: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await audit(trx, context, 'questionnaire.updated', id, { fields: Object.keys(changes) });
        return updated;
      });
      return presentQuestionnaire(row);
    },

    async remove(context: RequestContext, id: string) {
      await db.transaction().execute(async (trx) => {
        const current = await load(trx, context.scope, id, true);
        const used = await trx.selectFrom('assessments').select('id').where('questionnaire_id', '=', id).limit(1).executeTakeFirst();
        if (used) throw conflict('questionnaire has assessments: archive it instead (POST /questionnaires/{qID}/archive)');
        await trx.deleteFrom('questionnaires').where('id', '=', id).execute();
        await audit(trx, context, 'questionnaire.deleted', id, { title: current.title, status: current.status, version: current.version });
      });
    },

    /** draft → published; fixes the mapped controls and archives the family's previously published version. */
    async publish(context: RequestContext, id: string) {
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const current = await load(trx, context.scope, id, true);
        if (current.status !== 'draft') throw conflict(`questionnaire is already ${current.status}`);
        if (current.questions.length === 0) throw conflict('a questionnaire needs at least one question to be published');
        const controls = mappedControls(current.questions);
        if (controls.length) {
          await trx
            .insertInto('questionnaire_controls')
            .values(controls.map((c) => ({ questionnaire_id: id, workspace_id: current.workspace_id, ...c })))
            .onConflict((oc) => oc.doNothing())
            .execute();
        }
        const superseded = await trx
          .updateTable('questionnaires')
          .set({ status: 'archived', archived_at: now, updated_at: now })
          .where(inScope(context.scope))
          .where('family_id', '=', current.family_id)
          .where('status', '=', 'published')
          .returning(['id', 'version'])
          .execute();
        for (const old of superseded) await audit(trx, context, 'questionnaire.archived', old.id, { reason: 'superseded', by_version: current.version });
        const published = await trx
          .updateTable('questionnaires')
          .set({ status: 'published', published_at: now, updated_at: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await audit(trx, context, 'questionnaire.published', id, { version: current.version, controls: controls.map(keyOf), superseded: superseded.map((s) => s.id) });
        return published;
      });
      return presentQuestionnaire(row);
    },

    /** No new assignments; assessments under way continue and attestations stay. */
    async archive(context: RequestContext, id: string) {
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const current = await load(trx, context.scope, id, true);
        if (current.status === 'archived') throw conflict('questionnaire is already archived');
        const archived = await trx
          .updateTable('questionnaires')
          .set({ status: 'archived', archived_at: now, updated_at: now })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await audit(trx, context, 'questionnaire.archived', id, { from: current.status });
        return archived;
      });
      return presentQuestionnaire(row);
    },

    /** A draft copy of a published (or archived) questionnaire, version + 1, to change its questions. */
    async newVersion(context: RequestContext, id: string) {
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const source = await load(trx, context.scope, id, true);
        if (source.status === 'draft') throw conflict('questionnaire is a draft: change it directly');
        const family = await trx
          .selectFrom('questionnaires')
          .select(['id', 'version', 'status'])
          .where(inScope(context.scope))
          .where('family_id', '=', source.family_id)
          .forUpdate()
          .execute();
        const draft = family.find((f) => f.status === 'draft');
        if (draft) throw conflict('a draft version of this questionnaire exists already', { draft_id: draft.id });
        const created = await insertDraft(
          trx,
          context,
          now,
          {
            title: source.title,
            description: source.description,
            framework: source.framework,
            template_id: source.template_id,
            template_version: source.template_version,
            lang: source.lang,
            questions: source.questions,
            assignees: source.assignees,
            due_date: source.due_date && source.due_date >= today(now) ? source.due_date : null,
            attestation_validity_days: source.attestation_validity_days,
          },
          { family_id: source.family_id, version: Math.max(...family.map((f) => f.version)) + 1, previous_version_id: source.id },
        );
        await audit(trx, context, 'questionnaire.version_created', created.id, { previous_version_id: source.id, version: created.version });
        return created;
      });
      return presentQuestionnaire(row);
    },

    /** One assessment per assignee (contracts section 5); only published questionnaires. */
    async assign(context: RequestContext, id: string, body: AssignBody) {
      const { scope } = context;
      const now = deps.clock.now();
      const created = await db.transaction().execute(async (trx) => {
        const q = await load(trx, scope, id, true);
        if (q.status !== 'published') throw conflict(`only published questionnaires can be assigned (this one is ${q.status})`);
        const refs = body.assignees ?? q.assignees;
        if (refs.length === 0) throw badRequest('assignees are required (none given and the questionnaire has no default assignees)');
        const assignees = await resolveMembers(trx, scope.tenantId, refs, 'assignee');
        let reviewerId: string | null = null;
        if (body.reviewer_id) {
          const [reviewer] = await resolveMembers(trx, scope.tenantId, [body.reviewer_id], 'reviewer');
          if (!canReview(reviewer!.role)) throw badRequest(`reviewer "${reviewer!.username}" lacks the assessment:review permission`);
          if (assignees.some((a) => a.id === reviewer!.id)) throw badRequest('the reviewer cannot be an assignee: nobody reviews their own assessment');
          reviewerId = reviewer!.id;
        }
        const dueDate = body.due_date !== undefined ? (checkDueDate(body.due_date, now) ?? null) : q.due_date;
        const open = await trx
          .selectFrom('assessments')
          .select('assignee_id')
          .where('questionnaire_id', '=', id)
          .where(
            'assignee_id',
            'in',
            assignees.map((a) => a.id),
          )
          .where('status', '!=', 'approved')
          .execute();
        if (open.length) {
          const who = assignees.find((a) => a.id === open[0]!.assignee_id)!;
          throw conflict(`user "${who.username}" already has an open assessment of this questionnaire`, { assignee_id: who.id });
        }
        const rows = await trx
          .insertInto('assessments')
          .values(
            assignees.map((a) => ({
              id: randomUUID(),
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              questionnaire_id: id,
              assignee_id: a.id,
              reviewer_id: reviewerId,
              status: 'assigned' as const,
              due_date: dueDate,
              assigned_by: actorRef(context),
              gaps: json([]),
              created_at: now,
              updated_at: now,
            })),
          )
          .returningAll()
          .execute();
        const keys = mappedControls(q.questions).map(keyOf);
        const transitions = await refreshControls(trx, scope, keys, now);
        for (const row of rows) {
          const who = assignees.find((a) => a.id === row.assignee_id)!;
          await auditInScope(trx, deps.clock, context, {
            action: 'assessment.assigned',
            targetType: 'assessment',
            targetId: row.id,
            details: { questionnaire_id: id, assignee_id: who.id, assignee: who.username, reviewer_id: reviewerId, due_date: dueDate },
          });
        }
        await emitEvents(
          trx,
          deps.clock,
          rows.map((row) => ({
            tenantId: scope.tenantId,
            workspaceId: scope.workspaceId,
            type: 'assessment.assigned',
            data: { assessment_id: row.id, questionnaire_id: id, questionnaire_title: q.title, assignee_id: row.assignee_id, due_date: dueDate },
          })),
        );
        if (transitions.length) {
          await audit(trx, context, 'controls.status_changed', id, { transitions: transitions.map((t) => ({ control: keyOf(t), from: t.from, to: t.to })) });
        }
        return rows;
      });
      return { items: await presentAssessments(db, created, now) };
    },

    async addQuestion(context: RequestContext, id: string, body: QuestionInput & { position?: number }) {
      const now = deps.clock.now();
      return db.transaction().execute(async (trx) => {
        const q = await load(trx, context.scope, id, true);
        requireDraft(q, 'questions change');
        const { position, ...input } = body;
        const [question] = normalizeQuestions([{ ...input, id: input.id ?? nextQuestionId(new Set(q.questions.map((x) => x.id))) }], q.questions);
        const questions = [...q.questions];
        questions.splice(position === undefined ? questions.length : Math.min(position, questions.length), 0, question!);
        await trx
          .updateTable('questionnaires')
          .set({ questions: json(questions), updated_at: now })
          .where('id', '=', id)
          .execute();
        await audit(trx, context, 'questionnaire.question_added', id, { question_id: question!.id });
        return question!;
      });
    },

    async updateQuestion(context: RequestContext, id: string, questionId: string, body: QuestionInput) {
      const now = deps.clock.now();
      return db.transaction().execute(async (trx) => {
        const q = await load(trx, context.scope, id, true);
        const index = q.questions.findIndex((x) => x.id === questionId);
        if (index < 0) throw notFound('question not found');
        requireDraft(q, 'questions change');
        if (body.id !== undefined && body.id !== questionId) throw badRequest('the question id is fixed: remove the question and add another instead');
        const question = normalizeQuestion(body, questionId);
        const questions = [...q.questions];
        questions[index] = question;
        await trx
          .updateTable('questionnaires')
          .set({ questions: json(questions), updated_at: now })
          .where('id', '=', id)
          .execute();
        await audit(trx, context, 'questionnaire.question_updated', id, { question_id: questionId });
        return question;
      });
    },

    async removeQuestion(context: RequestContext, id: string, questionId: string) {
      const now = deps.clock.now();
      await db.transaction().execute(async (trx) => {
        const q = await load(trx, context.scope, id, true);
        if (!q.questions.some((x) => x.id === questionId)) throw notFound('question not found');
        requireDraft(q, 'questions change');
        await trx
          .updateTable('questionnaires')
          .set({ questions: json(q.questions.filter((x) => x.id !== questionId)), updated_at: now })
          .where('id', '=', id)
          .execute();
        await audit(trx, context, 'questionnaire.question_removed', id, { question_id: questionId });
      });
    },
  };
}
