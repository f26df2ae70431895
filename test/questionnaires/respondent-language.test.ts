import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, unique, type Session, type TenantFixture } from '../harness/identity.js';
import { templateIn } from '../../src/modules/questionnaires/templates.js';
import { api, assign, fromTemplate, publish } from './helpers.js';

/**
 * Questionnaires in the respondent's language (issue 25, part 8): an assessment of a questionnaire
 * made from a template is read in the language of ?lang= or Accept-Language, by the assignee
 * (/assessments/{aID}) and by an outside respondent (/respond/assessment); a question edited after
 * creation stays as written; answers (option values) are the same in every language.
 */
let t: TestApp;
let tenant: TenantFixture;
let assignee: Session;
let assessmentId: string;
let editedId: string;
const en = templateIn('fedramp-at', 'en')!;
const de = templateIn('fedramp-at', 'de')!;
const fr = templateIn('fedramp-at', 'fr')!;
const choice = en.questions.find((q) => q.type === 'single_choice')!;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  assignee = await addUser(t, tenant, 'read-only', unique('respondent'));
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at', lang: 'en' });
  // One question rewritten in the builder: it has no translation any more.
  const first = q.questions[0];
  editedId = first.id;
  const { control_ids: _ids, ...rest } = first;
  await call(t.app, tenant.admin.token, {
    method: 'PUT',
    url: `${api(tenant.id)}/questionnaires/${q.id}/questions/${first.id}`,
    payload: { ...rest, text: 'Our own wording of the first question' },
    expect: 200,
  });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [assignee.user_id] });
  assessmentId = a!.id as string;
});
afterAll(async () => {
  await t.close();
});

const read = (query = '', headers: Record<string, string> = {}) =>
  call(t.app, assignee.token, { method: 'GET', url: `${api(tenant.id)}/assessments/${assessmentId}${query}`, headers, expect: 200 });

type Body = { lang: string; questionnaire_title: string; questions: Array<{ id: string; text: string; help?: string; options?: Array<{ value: string; label: string }> }> };
const questionOf = (body: Body, id: string) => body.questions.find((q) => q.id === id)!;

describe('GET /assessments/{aID} in the respondent language', () => {
  it('?lang=de: the German title, question texts, help and option labels; option values unchanged; Content-Language de', async () => {
    const res = await read('?lang=de');
    const body = res.json() as Body;
    expect(res.headers['content-language']).toBe('de');
    expect(body.lang).toBe('de');
    expect(body.questionnaire_title).toBe(de.title);
    const deChoice = de.questions.find((q) => q.id === choice.id)!;
    expect(questionOf(body, choice.id)).toMatchObject({ text: deChoice.text, options: deChoice.options });
    expect(questionOf(body, choice.id).options!.map((o) => o.value)).toEqual(choice.options!.map((o) => o.value));
    const withHelp = de.questions.find((q) => q.help && q.id !== editedId)!;
    expect(questionOf(body, withHelp.id).help).toBe(withHelp.help);
  });

  it('a question edited after creation stays as written in every language', async () => {
    for (const lang of ['de', 'fr', 'en']) expect(questionOf((await read(`?lang=${lang}`)).json(), editedId).text).toBe('Our own wording of the first question');
  });

  it('Accept-Language fr-FR without ?lang= serves French; ?lang= wins over Accept-Language', async () => {
    const fromHeader = (await read('', { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' })).json() as Body;
    expect(fromHeader).toMatchObject({ lang: 'fr', questionnaire_title: fr.title });
    expect(questionOf(fromHeader, choice.id).text).toBe(fr.questions.find((q) => q.id === choice.id)!.text);
    expect(((await read('?lang=de', { 'accept-language': 'fr' })).json() as Body).lang).toBe('de');
  });

  it('without a language, or an unsupported one, the questionnaire is served as created (English)', async () => {
    for (const res of [await read(), await read('?lang=xx'), await read('', { 'accept-language': 'ja-JP' })]) {
      const body = res.json() as Body;
      expect(body).toMatchObject({ lang: 'en', questionnaire_title: en.title });
      expect(questionOf(body, choice.id).text).toBe(choice.text);
    }
  });

  it('answers saved from the German view are the option values and come back in German', async () => {
    const res = await call(t.app, assignee.token, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${assessmentId}/respond?lang=de`,
      payload: { responses: [{ question_id: choice.id, answer: choice.options![0]!.value }] },
      expect: 200,
    });
    const body = res.json() as Body & { responses: Array<{ question_id: string; answer: string }> };
    expect(body.lang).toBe('de');
    expect(body.responses).toContainEqual(expect.objectContaining({ question_id: choice.id, answer: choice.options![0]!.value }));
    expect((await read('?lang=en')).json().responses).toContainEqual(expect.objectContaining({ answer: choice.options![0]!.value }));
  });

  it('a questionnaire written from scratch has no translation: served as written, lang = its own', async () => {
    const q = (
      await call(t.app, tenant.admin.token, {
        method: 'POST',
        url: `${api(tenant.id)}/questionnaires`,
        payload: { title: 'Eigene Fragen', questions: [{ id: 'one', text: 'Gibt es eine Richtlinie?', type: 'yes_no', required: true, control_mappings: ['nist-800-53:PE-1'] }] },
        expect: 201,
      })
    ).json();
    await publish(t, tenant.admin.token, tenant.id, q.id);
    const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [assignee.user_id] });
    const body = (await call(t.app, assignee.token, { method: 'GET', url: `${api(tenant.id)}/assessments/${a!.id}?lang=fr`, expect: 200 })).json() as Body;
    expect(body).toMatchObject({ lang: q.lang, questionnaire_title: 'Eigene Fragen' });
    expect(body.questions[0]!.text).toBe('Gibt es eine Richtlinie?');
  });
});

describe('GET /respond/assessment (outside respondent) in the respondent language', () => {
  it('Accept-Language de-DE: the link opens the questionnaire in German; ?lang=pt serves Portuguese', async () => {
    const created = await call(t.app, tenant.users['security-analyst'].token, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${assessmentId}/links`,
      payload: { name: 'Lieferant GmbH' },
      expect: 201,
    });
    const token = created.json().token as string;
    const res = await call(t.app, token, { method: 'GET', url: '/api/v1/respond/assessment', headers: { 'accept-language': 'de-DE,de;q=0.9' }, expect: 200 });
    expect(res.headers['content-language']).toBe('de');
    const body = res.json() as Body;
    expect(body).toMatchObject({ lang: 'de', questionnaire_title: de.title });
    expect(questionOf(body, choice.id).text).toBe(de.questions.find((q) => q.id === choice.id)!.text);
    const pt = templateIn('fedramp-at', 'pt')!;
    const inPt = (await call(t.app, token, { method: 'GET', url: '/api/v1/respond/assessment?lang=pt', expect: 200 })).json() as Body;
    expect(inPt).toMatchObject({ lang: 'pt', questionnaire_title: pt.title });
    const saved = await call(t.app, token, {
      method: 'POST',
      url: '/api/v1/respond/assessment/responses?lang=de',
      headers: { 'accept-language': 'en' },
      payload: { responses: [{ question_id: choice.id, answer: choice.options![1]!.value }] },
      expect: 200,
    });
    expect((saved.json() as Body).lang).toBe('de');
  });
});
