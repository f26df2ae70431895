import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { ALL_TYPES, api, assign, auditOf, fromTemplate, publish, type QuestionJson } from './helpers.js';

/**
 * The questionnaire endpoints and their status codes: templates (languages, framework filter),
 * from-template and custom creation with every question type and its checks, list, read, update,
 * delete, publish, archive, versions, assign, and the question endpoints (draft only; a published
 * questionnaire changes through a new version).
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

const admin = () => tenant.admin.token;
const url = (path = '') => `${api(tenant.id)}/questionnaires${path}`;
const TEMPLATE_COUNT = 20;

async function custom(body: Record<string, unknown> = {}) {
  return (await call(t.app, admin(), { method: 'POST', url: url(), payload: { title: 'Site security', questions: ALL_TYPES, ...body }, expect: 201 })).json();
}

describe('GET /questionnaires/templates', () => {
  it('lists the 20 templates, paged, in English by default', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: url('/templates?per_page=500'), expect: 200 });
    expect(res.headers['content-language']).toBe('en');
    const list = res.json();
    expect(list).toMatchObject({ total: TEMPLATE_COUNT, page: 1, per_page: 500, total_pages: 1, lang: 'en' });
    expect(list.items.map((x: { id: string }) => x.id)).toContain('cmmc-l2-at');
    expect(list.items.find((x: { id: string }) => x.id === 'gdpr-dpia')).toMatchObject({ framework: 'gdpr', lang: 'en', question_count: 15 });
    const page2 = (await call(t.app, admin(), { url: url('/templates?per_page=8&page=3'), expect: 200 })).json();
    expect(page2).toMatchObject({ total: TEMPLATE_COUNT, page: 3, per_page: 8, total_pages: 3 });
    expect(page2.items).toHaveLength(4);
  });

  it('?framework= keeps the templates mapping to it; an unknown framework is 400', async () => {
    const ids = async (framework: string) =>
      (await call(t.app, admin(), { url: url(`/templates?framework=${framework}&per_page=100`), expect: 200 }))
        .json()
        .items.map((x: { id: string }) => x.id)
        .sort();
    expect(await ids('gdpr')).toEqual(['gdpr-dpia']);
    expect(await ids('hipaa')).toEqual(['hipaa-sanctions', 'hipaa-training']);
    expect(await ids('cmmc-l2')).toEqual(['cmmc-l2-at', 'cmmc-l2-ir', 'cmmc-l2-ma', 'cmmc-l2-pe', 'cmmc-l2-ps']);
    expect(await ids('nist-800-53')).toHaveLength(TEMPLATE_COUNT);
    const bad = await call(t.app, admin(), { url: url('/templates?framework=nope') });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^unknown framework "nope"/) });
  });

  it('serves ?lang= first, then Accept-Language by q-value, then English', async () => {
    const title = async (query: string, headers: Record<string, string> = {}) => {
      const res = await call(t.app, admin(), { url: url(`/templates/fedramp-at${query}`), headers, expect: 200 });
      return [res.headers['content-language'], res.json().title];
    };
    expect(await title('?lang=fr')).toEqual(['fr', 'FedRAMP Moderate – Sensibilisation et formation']);
    expect(await title('', { 'accept-language': 'es;q=1, pt-BR;q=0.8, de;q=0.5' })).toEqual(['pt', 'FedRAMP Moderate – Sensibilização e formação']);
    expect(await title('?lang=de', { 'accept-language': 'fr' })).toEqual(['de', expect.stringMatching(/Schulung/)]);
    expect(await title('?lang=xx', { 'accept-language': 'ja' })).toEqual(['en', 'FedRAMP Moderate – Awareness and Training']);
    const list = await call(t.app, admin(), { url: url('/templates?lang=de&framework=gdpr'), expect: 200 });
    expect(list.json()).toMatchObject({ lang: 'de', items: [{ id: 'gdpr-dpia', lang: 'de', title: 'Datenschutz-Folgenabschätzung nach Art. 35 DSGVO' }] });
  });

  it('every template has the same questions, types and control mappings in EN, DE, FR and PT', async () => {
    const list = (await call(t.app, admin(), { url: url('/templates?per_page=100'), expect: 200 })).json();
    for (const { id } of list.items as Array<{ id: string }>) {
      const shapes = [];
      for (const lang of ['en', 'de', 'fr', 'pt']) {
        const tpl = (await call(t.app, admin(), { url: url(`/templates/${id}?lang=${lang}`), expect: 200 })).json();
        expect(tpl.lang, `${id} ${lang}`).toBe(lang);
        shapes.push(
          tpl.questions.map((q: QuestionJson & { text: string }) => ({
            id: q.id,
            type: q.type,
            required: q.required,
            options: q.options?.map((o) => o.value),
            accepted_types: q.accepted_types,
            control_mappings: q.control_mappings,
          })),
        );
      }
      for (const shape of shapes.slice(1)) expect(shape, id).toEqual(shapes[0]);
    }
  });

  it('404 for an unknown template; 401 without a token', async () => {
    const res = await call(t.app, admin(), { url: url('/templates/nope') });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'template "nope" not found' });
    expect((await t.app.inject({ url: url('/templates') })).statusCode).toBe(401);
  });
});

describe('POST /questionnaires/from-template', () => {
  it('201: a draft copy in the language of lang, with the spec body fields', async () => {
    const q = await fromTemplate(t, admin(), tenant.id, {
      template_id: 'gdpr-dpia',
      lang: 'pt',
      title: 'DPIA – CRM',
      description: 'CRM migration',
      assignees: [tenant.users['read-only'].username],
      due_date: '2027-01-15',
      framework: 'gdpr',
    });
    expect(q).toMatchObject({
      status: 'draft',
      version: 1,
      template_id: 'gdpr-dpia',
      template_version: 1,
      lang: 'pt',
      title: 'DPIA – CRM',
      description: 'CRM migration',
      assignees: [tenant.users['read-only'].user_id],
      due_date: '2027-01-15',
      framework: 'gdpr',
      question_count: 15,
      published_at: null,
    });
    expect(q.frameworks).toEqual(expect.arrayContaining(['gdpr', 'nist-800-53']));
    expect(q.questions.some((x: QuestionJson) => x.type === 'text_long')).toBe(true);
    expect((await auditOf(t, tenant.id, 'questionnaire.created')).some((e) => e.target_id === q.id)).toBe(true);
  });

  it('400: unknown template, past due date, unknown assignee, unknown framework, unknown field; 403 without questionnaire:write', async () => {
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ template_id: 'nope' }, 'unknown template_id "nope"'],
      [{ template_id: 'fedramp-at', due_date: '2020-01-01' }, 'due_date must not be in the past'],
      [{ template_id: 'fedramp-at', due_date: '2027-02-30' }, /due_date/],
      [{ template_id: 'fedramp-at', assignees: ['ghost'] }, 'assignee "ghost" is not a user of this tenant'],
      [{ template_id: 'fedramp-at', assignees: [other.admin.user_id] }, `assignee "${other.admin.user_id}" is not a user of this tenant`],
      [{ template_id: 'fedramp-at', framework: 'nope' }, /^unknown framework "nope"/],
      [{ template_id: 'fedramp-at', colour: 'red' }, /colour/],
      [{}, /template_id/],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, admin(), { method: 'POST', url: url('/from-template'), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
      if (typeof message === 'string') expect(res.json().error.message).toBe(message);
      else expect(res.json().error.message).toMatch(message);
    }
    const denied = await call(t.app, tenant.users.auditor.token, { method: 'POST', url: url('/from-template'), payload: { template_id: 'fedramp-at' } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error).toMatchObject({ code: 'FORBIDDEN', message: 'missing permission questionnaire:write' });
  });
});

describe('POST /questionnaires (custom) and the question types', () => {
  it('201 with every question type; mappings as sent, normalised in control_ids (NIST-PE-1 is nist-800-53:PE-1), extensions lower-cased with a dot', async () => {
    const q = await custom({ attestation_validity_days: 90 });
    expect(q).toMatchObject({ status: 'draft', template_id: null, framework: 'nist-800-53', attestation_validity_days: 90, question_count: ALL_TYPES.length });
    expect(q.questions.map((x: QuestionJson) => x.type)).toEqual(['yes_no', 'single_choice', 'multi_choice', 'text_short', 'text_long', 'date', 'number', 'file_upload']);
    expect(q.questions[0]).toMatchObject({ id: 'policy', required: true, control_mappings: ['NIST-PE-1'], control_ids: ['nist-800-53:PE-1'] });
    expect(q.questions[3]).toMatchObject({ id: 'owner', required: false, control_mappings: [], control_ids: [] });
    expect(q.questions[6]).toMatchObject({ min: 0, max: 100, unit: 'percent' });
    expect(q.questions[7]).toMatchObject({ accepted_types: ['.pdf', '.csv'] });
    expect(q.frameworks).toEqual(['nist-800-53', 'nist-800-171']);
  });

  it('generates question ids when none are given', async () => {
    const q = await custom({
      questions: [
        { text: 'A?', type: 'yes_no' },
        { text: 'B?', type: 'yes_no' },
      ],
    });
    expect(q.questions.map((x: QuestionJson) => x.id)).toEqual(['q-1', 'q-2']);
  });

  it('400 naming the problem for each invalid question', async () => {
    const yn = { id: 'a', text: 'A?', type: 'yes_no' };
    const cases: Array<[unknown, string | RegExp]> = [
      [{ ...yn, type: 'rating' }, /type/],
      [{ ...yn, text: '  ' }, 'question "a": text is required'],
      [{ ...yn, id: 'Bad Id' }, 'question id "Bad Id" must be lower-case letters, digits and dashes (at most 80)'],
      [{ ...yn, type: 'single_choice' }, 'question "a": single_choice needs at least 2 options'],
      [
        {
          ...yn,
          type: 'multi_choice',
          options: [
            { value: 'x', label: 'X' },
            { value: 'x', label: 'Y' },
          ],
        },
        'question "a": duplicate option value "x"',
      ],
      [
        {
          ...yn,
          type: 'single_choice',
          options: [
            { value: 'X Y', label: 'X' },
            { value: 'z', label: 'Z' },
          ],
        },
        'question "a": option value "X Y" must be lower-case letters, digits and underscores',
      ],
      [
        {
          ...yn,
          options: [
            { value: 'x', label: 'X' },
            { value: 'y', label: 'Y' },
          ],
        },
        'question "a": options are only for single_choice and multi_choice questions',
      ],
      [{ ...yn, type: 'file_upload' }, 'question "a": accepted_types (file extensions such as ".pdf") are required for file_upload questions'],
      [{ ...yn, type: 'file_upload', accepted_types: ['.p d f'] }, 'question "a": ".p d f" is not a file extension such as ".pdf"'],
      [{ ...yn, accepted_types: ['.pdf'] }, 'question "a": accepted_types are only for file_upload questions'],
      [{ ...yn, type: 'number', min: 5, max: 5 }, 'question "a": min must be below max'],
      [{ ...yn, min: 1 }, 'question "a": min, max and unit are only for number questions'],
      [{ ...yn, control_mappings: ['AT-2'] }, 'control mapping "AT-2" must be "<framework>:<control_id>" (e.g. nist-800-53:AT-2)'],
      [{ ...yn, control_mappings: ['iso-9001:4.1'] }, /^control mapping "iso-9001:4.1": unknown framework "iso-9001"/],
      [{ ...yn, control_mappings: ['nist-800-53:ZZ-99'] }, 'control mapping "nist-800-53:ZZ-99": nist-800-53 has no control "ZZ-99"'],
    ];
    for (const [question, message] of cases) {
      const res = await call(t.app, admin(), { method: 'POST', url: url(), payload: { title: 'x', questions: [question] } });
      expect(res.statusCode, JSON.stringify(question)).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
      if (typeof message === 'string') expect(res.json().error.message).toBe(message);
      else expect(res.json().error.message).toMatch(message);
    }
    const dup = await call(t.app, admin(), { method: 'POST', url: url(), payload: { title: 'x', questions: [yn, yn] } });
    expect(dup.json().error.message).toBe('duplicate question id "a"');
    const noTitle = await call(t.app, admin(), { method: 'POST', url: url(), payload: { title: ' ' } });
    expect([noTitle.statusCode, noTitle.json().error.message]).toEqual([400, 'title must not be empty']);
    const tooMany = await call(t.app, admin(), {
      method: 'POST',
      url: url(),
      payload: { title: 'x', questions: Array.from({ length: 201 }, () => ({ text: 'A?', type: 'yes_no' })) },
    });
    expect(tooMany.statusCode).toBe(400);
  });
});

describe('list, read, update, delete', () => {
  it('lists newest first, paged, filtered by status, framework and template_id; another tenant sees none', async () => {
    const all = (await call(t.app, tenant.users['read-only'].token, { url: url('?per_page=2'), expect: 200 })).json();
    expect(all).toMatchObject({ page: 1, per_page: 2 });
    expect(all.total).toBeGreaterThanOrEqual(3);
    expect(all.items).toHaveLength(2);
    expect(all.items[0].created_at >= all.items[1].created_at).toBe(true);
    const gdpr = (await call(t.app, admin(), { url: url('?framework=gdpr'), expect: 200 })).json();
    expect(gdpr.items.map((q: { template_id: string }) => q.template_id)).toEqual(['gdpr-dpia']);
    expect((await call(t.app, admin(), { url: url('?template_id=gdpr-dpia'), expect: 200 })).json().total).toBe(1);
    expect((await call(t.app, admin(), { url: url('?status=published'), expect: 200 })).json().total).toBe(0);
    expect((await call(t.app, admin(), { url: url('?status=bogus') })).statusCode).toBe(400);
    expect((await call(t.app, other.admin.token, { url: `${api(other.id)}/questionnaires`, expect: 200 })).json().total).toBe(0);
  });

  it('read: 200, 404 unknown, 404 for another tenant, 400 for a malformed id', async () => {
    const q = await custom();
    expect((await call(t.app, tenant.users['read-only'].token, { url: url(`/${q.id}`), expect: 200 })).json()).toEqual(q);
    const missing = await call(t.app, admin(), { url: url('/00000000-0000-4000-8000-000000000000') });
    expect([missing.statusCode, missing.json().error.message]).toEqual([404, 'questionnaire not found']);
    expect((await call(t.app, other.admin.token, { url: `${api(other.id)}/questionnaires/${q.id}` })).statusCode).toBe(404);
    expect((await call(t.app, admin(), { url: url('/not-a-uuid') })).statusCode).toBe(400);
  });

  it('update: a draft changes in everything; a published one in title, description, assignees and due_date only (409 otherwise)', async () => {
    const q = await custom();
    const draft = await call(t.app, admin(), {
      method: 'PUT',
      url: url(`/${q.id}`),
      payload: { title: 'Renamed', questions: [ALL_TYPES[0]], attestation_validity_days: 30, due_date: null },
      expect: 200,
    });
    expect(draft.json()).toMatchObject({ title: 'Renamed', question_count: 1, attestation_validity_days: 30, due_date: null });
    await publish(t, admin(), tenant.id, q.id);
    const ok = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}`), payload: { description: 'now published', due_date: '2027-03-01' }, expect: 200 });
    expect(ok.json()).toMatchObject({ status: 'published', description: 'now published', due_date: '2027-03-01' });
    const locked = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}`), payload: { questions: ALL_TYPES } });
    expect(locked.statusCode).toBe(409);
    expect(locked.json().error).toMatchObject({
      code: 'CONFLICT',
      message: 'questionnaire is published: questions change only while it is a draft; create a new version (POST /questionnaires/{qID}/versions) to change it',
    });
    expect((await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}`), payload: { attestation_validity_days: 10 } })).statusCode).toBe(409);
    expect((await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}`), payload: { attestation_validity_days: 0 } })).statusCode).toBe(400);
    await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/archive`), expect: 200 });
    const archived = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}`), payload: { title: 'x' } });
    expect([archived.statusCode, archived.json().error.message]).toEqual([409, 'questionnaire is archived and cannot be changed']);
    expect((await call(t.app, tenant.users['read-only'].token, { method: 'PUT', url: url(`/${q.id}`), payload: { title: 'x' } })).statusCode).toBe(403);
    expect((await auditOf(t, tenant.id, 'questionnaire.updated')).filter((e) => e.target_id === q.id)).toHaveLength(2);
  });

  it('delete: 204 for one without assessments, then 404; 409 once assessed (archive instead)', async () => {
    const q = await custom();
    await call(t.app, admin(), { method: 'DELETE', url: url(`/${q.id}`), expect: 204 });
    expect((await call(t.app, admin(), { url: url(`/${q.id}`) })).statusCode).toBe(404);
    expect((await call(t.app, admin(), { method: 'DELETE', url: url(`/${q.id}`) })).statusCode).toBe(404);
    const used = await custom();
    await publish(t, admin(), tenant.id, used.id);
    await assign(t, admin(), tenant.id, used.id, { assignees: [tenant.users['read-only'].user_id] });
    const res = await call(t.app, admin(), { method: 'DELETE', url: url(`/${used.id}`) });
    expect([res.statusCode, res.json().error.message]).toEqual([409, 'questionnaire has assessments: archive it instead (POST /questionnaires/{qID}/archive)']);
    expect((await auditOf(t, tenant.id, 'questionnaire.deleted')).map((e) => e.target_id)).toContain(q.id);
  });
});

describe('publish, archive and versions', () => {
  it('publish: draft → published; 409 when published again or without questions', async () => {
    const q = await custom();
    const published = await publish(t, admin(), tenant.id, q.id);
    expect(published).toMatchObject({ status: 'published', published_at: t.clock.now().toISOString() });
    const again = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/publish`) });
    expect([again.statusCode, again.json().error.message]).toEqual([409, 'questionnaire is already published']);
    const empty = (await call(t.app, admin(), { method: 'POST', url: url(), payload: { title: 'empty' }, expect: 201 })).json();
    const none = await call(t.app, admin(), { method: 'POST', url: url(`/${empty.id}/publish`) });
    expect([none.statusCode, none.json().error.message]).toEqual([409, 'a questionnaire needs at least one question to be published']);
    expect((await call(t.app, tenant.users.auditor.token, { method: 'POST', url: url(`/${empty.id}/publish`) })).statusCode).toBe(403);
    expect((await auditOf(t, tenant.id, 'questionnaire.published')).map((e) => e.target_id)).toContain(q.id);
  });

  it('a new version is a draft copy; publishing it archives the previous version; 409 for a second draft or a draft source', async () => {
    const v1 = await custom();
    const draftSource = await call(t.app, admin(), { method: 'POST', url: url(`/${v1.id}/versions`) });
    expect([draftSource.statusCode, draftSource.json().error.message]).toEqual([409, 'questionnaire is a draft: change it directly']);
    await publish(t, admin(), tenant.id, v1.id);
    const v2 = (await call(t.app, admin(), { method: 'POST', url: url(`/${v1.id}/versions`), expect: 201 })).json();
    expect(v2).toMatchObject({ status: 'draft', version: 2, family_id: v1.id, previous_version_id: v1.id, questions: v1.questions });
    const second = await call(t.app, admin(), { method: 'POST', url: url(`/${v1.id}/versions`) });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toMatchObject({ message: 'a draft version of this questionnaire exists already', details: { draft_id: v2.id } });
    await call(t.app, admin(), { method: 'DELETE', url: url(`/${v2.id}/questions/owner`), expect: 204 });
    const published = await publish(t, admin(), tenant.id, v2.id);
    expect(published.question_count).toBe(ALL_TYPES.length - 1);
    expect((await call(t.app, admin(), { url: url(`/${v1.id}`), expect: 200 })).json()).toMatchObject({ status: 'archived' });
    const archiveAgain = await call(t.app, admin(), { method: 'POST', url: url(`/${v1.id}/archive`) });
    expect([archiveAgain.statusCode, archiveAgain.json().error.message]).toEqual([409, 'questionnaire is already archived']);
    expect((await auditOf(t, tenant.id, 'questionnaire.version_created')).map((e) => e.target_id)).toContain(v2.id);
  });
});

describe('questions: add, change, remove (draft only)', () => {
  it('adds at a position, replaces and removes while draft', async () => {
    const q = await custom({ questions: ALL_TYPES.slice(0, 2) });
    const added = await call(t.app, admin(), {
      method: 'POST',
      url: url(`/${q.id}/questions`),
      payload: { text: 'Inserted?', type: 'yes_no', position: 0, control_mappings: ['nist-800-53:PE-6'] },
      expect: 201,
    });
    expect(added.json()).toMatchObject({ id: 'q-3', type: 'yes_no', required: false, control_mappings: ['nist-800-53:PE-6'], control_ids: ['nist-800-53:PE-6'] });
    const changed = await call(t.app, admin(), {
      method: 'PUT',
      url: url(`/${q.id}/questions/policy`),
      payload: { text: 'Is the policy approved by management?', type: 'date', required: true },
      expect: 200,
    });
    expect(changed.json()).toMatchObject({ id: 'policy', type: 'date', required: true, control_mappings: [], control_ids: [] });
    await call(t.app, admin(), { method: 'DELETE', url: url(`/${q.id}/questions/cadence`), expect: 204 });
    const after = (await call(t.app, admin(), { url: url(`/${q.id}`), expect: 200 })).json();
    expect(after.questions.map((x: QuestionJson) => x.id)).toEqual(['q-3', 'policy']);
    for (const action of ['questionnaire.question_added', 'questionnaire.question_updated', 'questionnaire.question_removed']) {
      expect(
        (await auditOf(t, tenant.id, action)).map((e) => e.target_id),
        action,
      ).toContain(q.id);
    }
  });

  it('400 for a duplicate id, a changed id or an invalid question; 404 for an unknown question or questionnaire', async () => {
    const q = await custom({ questions: ALL_TYPES.slice(0, 2) });
    const dup = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/questions`), payload: { id: 'policy', text: 'x', type: 'yes_no' } });
    expect([dup.statusCode, dup.json().error.message]).toEqual([400, 'duplicate question id "policy"']);
    const renamed = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}/questions/policy`), payload: { id: 'other', text: 'x', type: 'yes_no' } });
    expect([renamed.statusCode, renamed.json().error.message]).toEqual([400, 'the question id is fixed: remove the question and add another instead']);
    const invalid = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}/questions/policy`), payload: { text: 'x', type: 'single_choice' } });
    expect([invalid.statusCode, invalid.json().error.message]).toEqual([400, 'question "policy": single_choice needs at least 2 options']);
    const unknownField = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/questions`), payload: { text: 'x', type: 'yes_no', weight: 3 } });
    expect(unknownField.statusCode).toBe(400);
    for (const req of [
      { method: 'PUT' as const, url: url(`/${q.id}/questions/nope`), payload: { text: 'x', type: 'yes_no' } },
      { method: 'DELETE' as const, url: url(`/${q.id}/questions/nope`) },
    ]) {
      const res = await call(t.app, admin(), req);
      expect([res.statusCode, res.json().error.message]).toEqual([404, 'question not found']);
    }
    const noQ = await call(t.app, admin(), { method: 'POST', url: url('/00000000-0000-4000-8000-000000000000/questions'), payload: { text: 'x', type: 'yes_no' } });
    expect([noQ.statusCode, noQ.json().error.message]).toEqual([404, 'questionnaire not found']);
  });

  it('409 on a published questionnaire, naming the new-version route', async () => {
    const q = await custom({ questions: ALL_TYPES.slice(0, 2) });
    await publish(t, admin(), tenant.id, q.id);
    const message = 'questionnaire is published: questions change only while it is a draft; create a new version (POST /questionnaires/{qID}/versions) to change it';
    for (const req of [
      { method: 'POST' as const, url: url(`/${q.id}/questions`), payload: { text: 'x', type: 'yes_no' } },
      { method: 'PUT' as const, url: url(`/${q.id}/questions/policy`), payload: { text: 'x', type: 'yes_no' } },
      { method: 'DELETE' as const, url: url(`/${q.id}/questions/policy`) },
    ]) {
      const res = await call(t.app, admin(), req);
      expect(res.statusCode, req.method).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'CONFLICT', message });
    }
  });
});

describe('POST /questionnaires/{qID}/assign', () => {
  let q: { id: string };
  beforeAll(async () => {
    q = await custom({ assignees: [tenant.users.auditor.username], due_date: '2027-02-01' });
  });

  it('409 unless published', async () => {
    const res = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/assign`), payload: { assignees: [tenant.users['read-only'].user_id] } });
    expect([res.statusCode, res.json().error.message]).toEqual([409, 'only published questionnaires can be assigned (this one is draft)']);
  });

  it('201 with one assessment per assignee (ids or usernames); default assignees and due date from the questionnaire', async () => {
    await publish(t, admin(), tenant.id, q.id);
    const items = await assign(t, admin(), tenant.id, q.id, {
      assignees: [tenant.users['read-only'].username, tenant.users['security-analyst'].user_id],
      reviewer_id: tenant.admin.user_id,
      due_date: '2027-01-10',
    });
    expect(items.map((a) => [a.assignee_id, a.status, a.reviewer_id, a.due_date])).toEqual([
      [tenant.users['read-only'].user_id, 'assigned', tenant.admin.user_id, '2027-01-10'],
      [tenant.users['security-analyst'].user_id, 'assigned', tenant.admin.user_id, '2027-01-10'],
    ]);
    const defaults = await assign(t, admin(), tenant.id, q.id, {});
    expect(defaults.map((a) => [a.assignee_id, a.due_date, a.reviewer_id])).toEqual([[tenant.users.auditor.user_id, '2027-02-01', null]]);
    const audited = (await auditOf(t, tenant.id, 'assessment.assigned')).map((e) => e.target_id);
    for (const a of [...items, ...defaults]) expect(audited).toContain(a.id);
  });

  it('400 for unknown users, a reviewer without assessment:review or among the assignees, a past due date; 409 for an open assessment', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ assignees: ['ghost'] }, 400, 'assignee "ghost" is not a user of this tenant'],
      [{ assignees: [tenant.admin.user_id], reviewer_id: tenant.users.auditor.user_id }, 400, `reviewer "${tenant.users.auditor.username}" lacks the assessment:review permission`],
      [{ assignees: [tenant.admin.user_id], reviewer_id: tenant.admin.user_id }, 400, 'the reviewer cannot be an assignee: nobody reviews their own assessment'],
      [{ assignees: [tenant.admin.user_id], due_date: '2026-01-01' }, 400, 'due_date must not be in the past'],
      [{ assignees: [tenant.users['read-only'].user_id] }, 409, `user "${tenant.users['read-only'].username}" already has an open assessment of this questionnaire`],
    ];
    for (const [payload, status, message] of cases) {
      const res = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/assign`), payload });
      expect([res.statusCode, res.json().error.message], JSON.stringify(payload)).toEqual([status, message]);
    }
    expect((await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/assign`), payload: { assignees: [] } })).statusCode).toBe(400);
    const noDefault = await custom();
    await publish(t, admin(), tenant.id, noDefault.id);
    const none = await call(t.app, admin(), { method: 'POST', url: url(`/${noDefault.id}/assign`), payload: {} });
    expect([none.statusCode, none.json().error.message]).toEqual([400, 'assignees are required (none given and the questionnaire has no default assignees)']);
    expect((await call(t.app, tenant.users['read-only'].token, { method: 'POST', url: url(`/${q.id}/assign`), payload: {} })).statusCode).toBe(403);
    expect((await call(t.app, other.admin.token, { method: 'POST', url: `${api(other.id)}/questionnaires/${q.id}/assign`, payload: {} })).statusCode).toBe(404);
  });

  it('an archived questionnaire cannot be assigned', async () => {
    await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/archive`), expect: 200 });
    const res = await call(t.app, admin(), { method: 'POST', url: url(`/${q.id}/assign`), payload: { assignees: [tenant.admin.user_id] } });
    expect([res.statusCode, res.json().error.message]).toEqual([409, 'only published questionnaires can be assigned (this one is archived)']);
  });
});
