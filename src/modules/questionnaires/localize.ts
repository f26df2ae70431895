import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Question } from './questions.js';
import { templates, type Language } from './templates.js';

/**
 * Questionnaires in the respondent's language. A questionnaire made from a template is a copy of
 * the template in one language (its `lang`); the template content holds every question in four.
 * A text is shown translated only while it is still exactly the template's text in the
 * questionnaire's language: a question the builder edited afterwards (or a custom title) has no
 * translation and stays as written, so a respondent never reads a translation of something else.
 * Question ids, types, option values and mappings never change with the language, so answers given
 * in one language stay valid in every other.
 */

interface Source {
  template_id: string | null;
  lang: string;
}

function sameOptions(a: Question['options'], b: Question['options']): boolean {
  if (!a || !b) return !a && !b;
  return a.length === b.length && a.every((o, i) => o.value === b[i]!.value && o.label === b[i]!.label);
}

/** The texts in `lang` where the template has them, else as stored; `lang` is what was served. */
export function localizeTexts(source: Source, title: string, questions: Question[], lang: Language): { lang: string; title: string; questions: Question[] } {
  const byLang = source.template_id ? templates().get(source.template_id) : undefined;
  const original = byLang?.get(source.lang as Language);
  const target = byLang?.get(lang);
  if (!original || !target || lang === source.lang) return { lang: source.lang, title, questions };
  const originalById = new Map(original.questions.map((q) => [q.id, q]));
  const targetById = new Map(target.questions.map((q) => [q.id, q]));
  let translated = 0;
  const localized = questions.map((q) => {
    const from = originalById.get(q.id);
    const to = targetById.get(q.id);
    if (!from || !to || from.text !== q.text || (from.help ?? '') !== (q.help ?? '') || !sameOptions(from.options, q.options)) return q;
    translated += 1;
    const labels = new Map((to.options ?? []).map((o) => [o.value, o.label]));
    return {
      ...q,
      text: to.text,
      ...(q.help !== undefined ? { help: to.help ?? q.help } : {}),
      ...(q.options ? { options: q.options.map((o) => ({ value: o.value, label: labels.get(o.value) ?? o.label })) } : {}),
    };
  });
  const titleTranslated = title === original.title;
  // Nothing of it is the template's any more: it is served as written, in its own language.
  if (translated === 0 && !titleTranslated) return { lang: source.lang, title, questions };
  return { lang, title: titleTranslated ? target.title : title, questions: localized };
}

/** An assessment as presentAssessment() returns it, with title and questions in `lang` where possible. */
export async function assessmentIn<T extends { questionnaire_id: string; questionnaire_title: string; questions: Question[] }>(
  db: Kysely<Database>,
  assessment: T,
  lang: Language,
): Promise<T & { lang: string }> {
  const source = await db.selectFrom('questionnaires').select(['template_id', 'lang']).where('id', '=', assessment.questionnaire_id).executeTakeFirstOrThrow();
  const served = localizeTexts(source, assessment.questionnaire_title, assessment.questions, lang);
  return { ...assessment, questionnaire_title: served.title, questions: served.questions, lang: served.lang };
}
