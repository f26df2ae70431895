import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, auditInScope } from '../../platform/audit/audit-log.js';
import { badRequest, conflict } from '../../platform/http/errors.js';
import { createPoamItems, type PoamItem, type PoamItemInput } from '../poam/index.js';
import { loadItems } from '../poam/index.js';
import { parsePoamId } from '../poam/index.js';
import { loadAssessment } from './assessment-service.js';
import type { Gap, GapSeverity } from './tables.js';
import type { Question } from './questions.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface GeneratePoamBody {
  question_ids?: string[];
  severity?: GapSeverity;
  point_of_contact?: string;
  scheduled_completion?: string;
}

const MAX_CONTROLS = 200;
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * POST /assessments/{id}/generate-poam: POA&M items, through the POA&M module's store, from a
 * rejected assessment (changes requested) or one whose latest review flagged gaps. One item per
 * question: those named in question_ids, else the flagged gaps; a rejection without flagged gaps
 * gives one item for the assessment as a whole. An item already raised for the same assessment and
 * question is returned again, not duplicated.
 */
export function createGeneratePoam(deps: Deps) {
  const db = deps.database.db;

  return async function generatePoam(context: RequestContext, id: string, body: GeneratePoamBody) {
    const { scope } = context;
    const now = deps.clock.now();
    return db.transaction().execute(async (trx) => {
      const assessment = await loadAssessment(trx, scope, id, true);
      const rejected = assessment.status === 'changes_requested';
      const gaps: Gap[] = assessment.gaps;
      if (!rejected && gaps.length === 0) {
        throw conflict(`assessment is ${assessment.status} without flagged gaps: POA&M items are raised from a rejected assessment or from gaps its review flagged`);
      }
      const q = await trx.selectFrom('questionnaires').selectAll().where('id', '=', assessment.questionnaire_id).executeTakeFirstOrThrow();
      const assignee = await trx.selectFrom('users').select('username').where('id', '=', assessment.assignee_id).executeTakeFirst();
      const questions = new Map(q.questions.map((x) => [x.id, x]));
      const gapOf = new Map(gaps.map((g) => [g.question_id, g]));
      let targets: Array<{ question: Question | null; gap: Gap | null }>;
      if (body.question_ids?.length) {
        targets = [...new Set(body.question_ids)].map((qid) => {
          const question = questions.get(qid);
          if (!question) throw badRequest(`question "${qid}" is not in this assessment's questionnaire`);
          return { question, gap: gapOf.get(qid) ?? null };
        });
      } else if (gaps.length) {
        targets = gaps.map((g) => ({ question: questions.get(g.question_id)!, gap: g }));
      } else {
        targets = [{ question: null, gap: null }];
      }

      const existing = new Map(
        (await trx.selectFrom('assessment_poam_items').select(['question_id', 'poam_id']).where('assessment_id', '=', id).execute()).map((r) => [r.question_id, r.poam_id]),
      );
      // An item deleted from the POA&M list since is raised again.
      const alive = new Map<string, PoamItem>();
      const wanted = [...existing.values()].map(parsePoamId).filter((n): n is number => n !== null);
      for (const item of await loadItems(trx, scope, wanted, now)) alive.set(item.id, item);
      for (const [key, poamId] of existing) {
        if (alive.has(poamId)) continue;
        existing.delete(key);
        await trx.deleteFrom('assessment_poam_items').where('assessment_id', '=', id).where('question_id', '=', key).execute();
      }
      const answers = new Map(
        (await trx.selectFrom('assessment_responses').select(['question_id', 'answer', 'notes']).where('assessment_id', '=', id).execute()).map((r) => [r.question_id, r]),
      );
      const contextLine = `Assessment ${id} of questionnaire "${q.title}" (version ${q.version}), answered by ${assignee?.username ?? assessment.assignee_id}.`;
      const fresh: Array<{ key: string; input: PoamItemInput }> = [];
      for (const { question, gap } of targets) {
        const key = question?.id ?? '';
        if (existing.has(key)) continue;
        const severity = gap?.severity ?? body.severity ?? 'MEDIUM';
        let input: PoamItemInput;
        if (question) {
          if (question.control_ids.length === 0) throw badRequest(`question "${question.id}" maps to no control: a POA&M item needs at least one`);
          const answer = answers.get(question.id);
          input = {
            weakness_name: clip(`${q.title}: ${question.text}`, 500),
            weakness_description: clip(
              [
                `Question: ${question.text}`,
                `Answer: ${answer?.answer || '(not answered)'}`,
                ...(answer?.notes ? [`Respondent notes: ${answer.notes}`] : []),
                ...(gap?.notes ? [`Reviewer: ${gap.notes}`] : assessment.review_notes ? [`Review notes: ${assessment.review_notes}`] : []),
                contextLine,
              ].join('\n'),
              20_000,
            ),
            control_ids: question.control_ids.slice(0, MAX_CONTROLS),
            severity,
            point_of_contact: '',
          };
        } else {
          const controls = [...new Set(q.questions.flatMap((x) => x.control_ids))].slice(0, MAX_CONTROLS);
          if (controls.length === 0) throw badRequest('the questionnaire maps to no control: a POA&M item needs at least one');
          input = {
            weakness_name: clip(`${q.title}: changes requested in review`, 500),
            weakness_description: clip([`Review notes: ${assessment.review_notes ?? ''}`, contextLine].join('\n'), 20_000),
            control_ids: controls,
            severity,
            point_of_contact: '',
          };
        }
        input.point_of_contact = body.point_of_contact?.trim() || assignee?.username || assessment.assignee_id;
        if (body.scheduled_completion) input.scheduled_completion = body.scheduled_completion;
        input.source = `assessment:${id}`;
        fresh.push({ key, input });
      }

      const created = await createPoamItems(
        trx,
        deps,
        actorOf(context),
        scope,
        fresh.map((f) => f.input),
      );
      if (created.length) {
        await trx
          .insertInto('assessment_poam_items')
          .values(created.map((item, i) => ({ assessment_id: id, question_id: fresh[i]!.key, poam_id: item.id, created_at: now })))
          .execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'assessment.poam_generated',
          targetType: 'assessment',
          targetId: id,
          details: { poam_ids: created.map((c) => c.id), question_ids: fresh.map((f) => f.key || null) },
        });
      }
      const byKey = new Map<string, PoamItem>(created.map((item, i) => [fresh[i]!.key, item]));
      for (const [key, poamId] of existing) byKey.set(key, alive.get(poamId)!);
      const items = targets.map((t) => byKey.get(t.question?.id ?? '')).filter((i): i is PoamItem => !!i);
      return { items, created: created.length, existing: items.length - created.length };
    });
  };
}
