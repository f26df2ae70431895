import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, fresh, unique, type TenantFixture } from '../harness/identity.js';
import { createDeliveryApp, createIntegration, parseMail, startSmtpServer, type SmtpReceiver } from '../integrations/helpers.js';
import { MAX_EVIDENCE_BYTES } from '../../src/modules/questionnaires/evidence-service.js';
import { api, assign, auditOf, fromTemplate, multipart, PDF, publish, validAnswer, type QuestionJson } from './helpers.js';

/**
 * Outside respondents (issue 25): a reviewer sends one assessment as a link; the link's token alone
 * opens that assessment's respondent view (read, answer, upload, submit) until it expires or is
 * revoked. Every status and message, the e-mail path through a real SMTP server, and the audit log.
 */
/** The console's public address; links never take the request's Host header (see respondent-public-url.test.ts). */
const PUBLIC_URL = 'https://grc.example.com/';
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let smtp: SmtpReceiver;
let questionnaireId: string;
let questions: QuestionJson[];
let upload: QuestionJson;

const linksUrl = (aId: string, tenantId = tenant.id) => `${api(tenantId)}/assessments/${aId}/links`;
const reviewer = () => tenant.users['security-analyst'].token;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createDeliveryApp({ env: { CONTROLGRAPH_PUBLIC_URL: PUBLIC_URL } });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  questionnaireId = q.id;
  questions = q.questions;
  upload = questions.find((x) => x.type === 'file_upload')!;
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

/** A fresh assessment of the published questionnaire, assigned to a new read-only member. */
async function newAssessment(): Promise<string> {
  const user = await addUser(t, tenant, 'read-only', unique('supplier-owner'));
  const [a] = await assign(t, tenant.admin.token, tenant.id, questionnaireId, { assignees: [user.user_id] });
  return a!.id as string;
}

async function createLink(aId: string, body: Record<string, unknown> = { name: 'Acme Supplies' }, token = reviewer(), headers: Record<string, string> = {}) {
  return call(t.app, token, { method: 'POST', url: linksUrl(aId), payload: body, headers });
}

async function newLink(body: Record<string, unknown> = { name: 'Acme Supplies' }) {
  const aId = await newAssessment();
  const res = await createLink(aId, body);
  expect(res.statusCode).toBe(201);
  return { aId, ...(res.json() as { link: { id: string; assessment_id: string }; token: string; url: string }) };
}

const asRespondent = (token: string | null, options: Parameters<typeof call>[2]) => call(t.app, token, options);
const uploadAs = (token: string, fields: Record<string, string>, file = { filename: 'records.pdf', contentType: 'application/pdf', content: PDF }) => {
  const body = multipart(fields, file);
  return asRespondent(token, { method: 'POST', url: '/api/v1/respond/evidence', payload: body.payload, headers: body.headers });
};

describe('POST /assessments/{aID}/links', () => {
  it('201: without a recipient the token and URL are returned once; only their hash is stored; the creation is audited', async () => {
    const aId = await newAssessment();
    const res = await createLink(aId, { name: 'Acme Supplies' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      delivery: 'copy',
      email_error: null,
      link: { assessment_id: aId, name: 'Acme Supplies', status: 'active', delivery: 'copy', use_count: 0, revoked_at: null },
    });
    expect(body.token).toMatch(/^cgr_[0-9A-Za-z]{40}$/);
    expect(body.url).toBe(`https://grc.example.com/respond#${body.token}`);
    expect(new Date(body.link.expires_at).getTime() - t.clock.now().getTime()).toBe(14 * 86_400_000);
    const row = await t.deps.database.db.selectFrom('assessment_links').selectAll().where('id', '=', body.link.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(body.token));
    expect(JSON.stringify(row)).not.toContain(body.token);
    const [entry] = (await auditOf(t, tenant.id, 'assessment_link.created')).filter((e) => e.target_id === body.link.id);
    expect(entry).toMatchObject({ actor_type: 'user', target_type: 'assessment_link', details: { assessment_id: aId, delivery: 'copy' } });
    expect(JSON.stringify(entry)).not.toContain(body.token);
  });

  it('expires_in_days sets the lifetime; 0 and more than 90 are 400', async () => {
    const aId = await newAssessment();
    const res = await createLink(aId, { name: 'Acme', expires_in_days: 30 });
    expect(new Date(res.json().link.expires_at).getTime() - t.clock.now().getTime()).toBe(30 * 86_400_000);
    for (const days of [0, 91]) {
      const bad = await createLink(aId, { name: 'Acme', expires_in_days: days });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toMatch(/expires_in_days/);
    }
    const noName = await createLink(aId, {});
    expect(noName.statusCode).toBe(400);
    expect(noName.json().error.message).toMatch(/name/);
    const badMail = await createLink(aId, { name: 'Acme', recipient_email: 'not-an-address' });
    expect(badMail.statusCode).toBe(400);
  });

  it('a recipient without an e-mail integration: copy, and email_error says why', async () => {
    const aId = await newAssessment();
    const body = (await createLink(aId, { name: 'Acme', recipient_email: 'security@acme.example' })).json();
    expect(body).toMatchObject({ delivery: 'copy', email_error: 'the tenant has no active e-mail integration', link: { recipient_email: 'security@acme.example' } });
    expect(body.token).toMatch(/^cgr_/);
  });

  it("with the tenant's e-mail integration the link is mailed to the recipient and never shown; the mailed token works", async () => {
    const integration = await createIntegration(t, tenant.admin.token, tenant.id, {
      type: 'email',
      name: 'grc mail',
      config: { to: ['grc@example.com'], events: ['assessment.submitted'], smtp: { host: '127.0.0.1', port: smtp.port, from: 'grc@example.com' } },
    });
    try {
      smtp.messages.length = 0;
      const aId = await newAssessment();
      // A forged Host header changes nothing: the mailed link is on the configured public URL.
      const res = await createLink(aId, { name: 'Acme', recipient_email: 'security@acme.example', expires_in_days: 7 }, reviewer(), { host: 'attacker.example' });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({ delivery: 'email', email_error: null, token: null, url: null, link: { delivery: 'email' } });
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]!.to).toEqual(['security@acme.example']);
      const mail = parseMail(smtp.messages[0]!.raw);
      // The subject is MIME-encoded (the title holds a dash outside ASCII).
      expect(mail.headers.subject).toMatch(/Questionnaire.to.answer/);
      const token = /https:\/\/grc\.example\.com\/respond#(cgr_[0-9A-Za-z]{40})/.exec(mail.text)![1]!;
      expect(mail.html).toContain(`https://grc.example.com/respond#${token}`);
      expect(smtp.messages[0]!.raw).not.toContain('attacker.example');
      const view = await asRespondent(token, { method: 'GET', url: '/api/v1/respond/assessment' });
      expect(view.statusCode).toBe(200);
      expect(view.json().id).toBe(aId);

      // A recipient the server refuses: the link falls back to copy, with the SMTP answer.
      smtp.rejectRecipients.add('gone@acme.example');
      const refused = (await createLink(aId, { name: 'Acme', recipient_email: 'gone@acme.example' })).json();
      expect(refused.delivery).toBe('copy');
      expect(refused.email_error).toMatch(/550|Mailbox unavailable|rejected/i);
      expect(refused.token).toMatch(/^cgr_/);
    } finally {
      await call(t.app, tenant.admin.token, { method: 'DELETE', url: `${api(tenant.id)}/integrations/${integration.id}`, expect: 204 });
    }
  });

  it("404 for an unknown assessment and for another tenant's (named under the caller's own tenant)", async () => {
    const aId = await newAssessment();
    const unknown = await createLink('00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'assessment not found' });
    const foreign = await call(t.app, other.admin.token, { method: 'POST', url: linksUrl(aId, other.id), payload: { name: 'x' } });
    expect(foreign.statusCode).toBe(404);
    const foreignList = await call(t.app, other.admin.token, { method: 'GET', url: linksUrl(aId, other.id) });
    expect(foreignList.statusCode).toBe(404);
  });

  it('401 without a token, 403 without assessment:review (a read-only user, even the assignee)', async () => {
    const aId = await newAssessment();
    const anonymous = await call(t.app, null, { method: 'POST', url: linksUrl(aId), payload: { name: 'x' } });
    expect(anonymous.statusCode).toBe(401);
    const readOnly = await createLink(aId, { name: 'x' }, tenant.users['read-only'].token);
    expect(readOnly.statusCode).toBe(403);
    expect(readOnly.json().error.message).toBe('missing permission assessment:review');
  });
});

describe('GET /assessments/{aID}/links and POST …/links/{linkID}/revoke', () => {
  it('lists the links newest first with their status and never a token; revoking ends one at once', async () => {
    const first = await newLink({ name: 'First' });
    t.clock.advance(1000);
    const second = (await createLink(first.aId, { name: 'Second' })).json();
    const list = await call(t.app, reviewer(), { method: 'GET', url: linksUrl(first.aId), expect: 200 });
    expect(list.json()).toMatchObject({
      total: 2,
      page: 1,
      items: [
        { name: 'Second', status: 'active' },
        { name: 'First', status: 'active' },
      ],
    });
    expect(list.body).not.toContain(first.token);
    expect(list.body).not.toContain(second.token);
    expect(list.body).not.toContain('token_hash');

    const revoked = await call(t.app, reviewer(), { method: 'POST', url: `${linksUrl(first.aId)}/${first.link.id}/revoke` });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: first.link.id, status: 'revoked', revoked_by_name: expect.any(String) });
    const again = await call(t.app, reviewer(), { method: 'POST', url: `${linksUrl(first.aId)}/${first.link.id}/revoke` });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'CONFLICT', message: 'the link is already revoked' });
    expect((await auditOf(t, tenant.id, 'assessment_link.revoked')).filter((e) => e.target_id === first.link.id)).toHaveLength(1);

    const ended = await asRespondent(first.token, { method: 'GET', url: '/api/v1/respond/assessment' });
    expect(ended.statusCode).toBe(401);
    expect(ended.json().error).toMatchObject({ code: 'LINK_REVOKED', message: 'this link was revoked: ask the sender for a new link' });
    const refusal = (await auditOf(t, tenant.id, 'assessment_link.refused')).find((e) => e.actor_id === first.link.id);
    expect(refusal).toMatchObject({ actor_type: 'respondent_link', details: { reason: 'revoked', assessment_id: first.aId } });
    // The other link of the same assessment goes on working.
    expect((await asRespondent(second.token, { method: 'GET', url: '/api/v1/respond/assessment' })).statusCode).toBe(200);
  });

  it('404 for an unknown link and for a link of another assessment named under this one', async () => {
    const a = await newLink();
    const b = await newLink();
    const unknown = await call(t.app, reviewer(), { method: 'POST', url: `${linksUrl(a.aId)}/00000000-0000-4000-8000-000000000000/revoke` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'assessment link not found' });
    const crossed = await call(t.app, reviewer(), { method: 'POST', url: `${linksUrl(a.aId)}/${b.link.id}/revoke` });
    expect(crossed.statusCode).toBe(404);
  });
});

describe('the respondent routes (the link token as bearer)', () => {
  it('401 without a token, with a malformed header, and for an unknown token', async () => {
    const missing = await asRespondent(null, { method: 'GET', url: '/api/v1/respond/assessment' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: 'this route needs the link\'s token: send it as "Authorization: Bearer cgr_…"' });
    const malformed = await t.app.inject({ method: 'GET', url: '/api/v1/respond/assessment', headers: { authorization: 'Basic abc' } });
    expect(malformed.statusCode).toBe(401);
    for (const token of [`cgr_${'x'.repeat(40)}`, tenant.admin.token]) {
      const res = await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/submit' });
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: 'unknown respondent link: ask the sender for a new link' });
    }
  });

  it("reads the one assessment without the tenant's people; every read is audited and counted", async () => {
    const { aId, token, link } = await newLink({ name: 'Acme' });
    const res = await asRespondent(token, { method: 'GET', url: '/api/v1/respond/assessment' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({ id: aId, status: 'assigned', link: { name: 'Acme' }, progress: { total: questions.length } });
    expect(body.questions).toHaveLength(questions.length);
    for (const field of ['assignee_id', 'assignee', 'reviewer_id', 'reviewer', 'reviewed_by', 'questionnaire_id']) expect(body).not.toHaveProperty(field);
    for (const user of Object.values(tenant.users)) expect(res.body).not.toContain(user.user_id);
    const accessed = (await auditOf(t, tenant.id, 'assessment_link.accessed')).filter((e) => e.actor_id === link.id);
    expect(accessed).toHaveLength(1);
    expect(accessed[0]).toMatchObject({ actor_type: 'respondent_link', actor_name: 'Acme (link)', target_id: aId, details: { read: 'assessment' } });
    const listed = (await call(t.app, reviewer(), { method: 'GET', url: linksUrl(aId), expect: 200 })).json().items[0];
    expect(listed).toMatchObject({ use_count: 1, last_used_at: t.clock.now().toISOString() });
  });

  it('answers, uploads and submits with the same checks as the assignee; each step is audited under the link', async () => {
    const { aId, token, link } = await newLink({ name: 'Acme' });
    const first = questions.find((q) => q.type !== 'file_upload')!;
    const saved = await asRespondent(token, {
      method: 'POST',
      url: '/api/v1/respond/assessment/responses',
      payload: { responses: [{ question_id: first.id, answer: validAnswer(first), notes: 'from Acme' }] },
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({ status: 'in_progress', responses: [{ question_id: first.id, notes: 'from Acme' }] });
    const responded = (await auditOf(t, tenant.id, 'assessment.responded')).find((e) => e.target_id === aId);
    expect(responded).toMatchObject({ actor_type: 'respondent_link', actor_id: link.id, actor_name: 'Acme (link)' });
    const stored = await t.deps.database.db.selectFrom('assessment_responses').selectAll().where('assessment_id', '=', aId).executeTakeFirstOrThrow();
    expect(stored.updated_by).toBeNull();

    const invalid = await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/responses', payload: { responses: [{ question_id: 'no-such', answer: 'x' }] } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toMatchObject({
      message: 'invalid response for question "no-such": no such question in this questionnaire',
      details: { errors: [{ question_id: 'no-such' }] },
    });

    const early = await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/submit' });
    expect(early.statusCode).toBe(400);
    expect(early.json().error.message).toMatch(/^required questions are not answered: /);
    expect(early.json().error.details.missing.length).toBeGreaterThan(0);

    // Another assessment of the tenant named in the form: the file still goes to the link's own.
    const elsewhere = await newAssessment();
    const file = await uploadAs(token, { assessment_id: elsewhere, question_id: upload.id, description: 'training records' });
    expect(file.statusCode).toBe(201);
    const evidence = file.json();
    expect(evidence).toMatchObject({ question_id: upload.id, filename: 'records.pdf', size_bytes: PDF.length, sha256: createHash('sha256').update(PDF).digest('hex') });
    expect(evidence).not.toHaveProperty('uploaded_by');
    const row = await t.deps.database.db.selectFrom('attestation_evidence').selectAll().where('id', '=', evidence.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ assessment_id: aId, uploaded_by: null, uploaded_by_name: 'Acme (link)' });
    expect((await auditOf(t, tenant.id, 'attestation_evidence.uploaded')).find((e) => e.target_id === evidence.id)).toMatchObject({
      actor_type: 'respondent_link',
      actor_id: link.id,
    });

    const wrongType = await uploadAs(token, { question_id: upload.id }, { filename: 'tool.exe', contentType: 'application/octet-stream', content: Buffer.from('MZ') });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.message).toMatch(/^file type "\.exe" is not accepted/);
    const notFile = await uploadAs(token, { question_id: first.id });
    expect(notFile.statusCode).toBe(400);
    expect(notFile.json().error.message).toBe(`question "${first.id}" is not a file_upload question`);

    const listed = await asRespondent(token, { method: 'GET', url: '/api/v1/respond/evidence' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject({ total: 1, items: [{ id: evidence.id }] });

    const answers = questions.map((q) => ({ question_id: q.id, answer: validAnswer(q, [evidence.id]) }));
    expect((await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/responses', payload: { responses: answers } })).statusCode).toBe(200);
    const submitted = await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/submit' });
    expect(submitted.statusCode).toBe(200);
    expect(submitted.json()).toMatchObject({ status: 'submitted', progress: { required_answered: submitted.json().progress.required } });
    expect((await auditOf(t, tenant.id, 'assessment.submitted')).find((e) => e.target_id === aId)).toMatchObject({ actor_type: 'respondent_link', actor_id: link.id });

    const afterSubmit = await asRespondent(token, {
      method: 'POST',
      url: '/api/v1/respond/assessment/responses',
      payload: { responses: [{ question_id: first.id, answer: validAnswer(first) }] },
    });
    expect(afterSubmit.statusCode).toBe(400);
    expect(afterSubmit.json().error.message).toBe('assessment is submitted: responses are read-only');
    const twice = await asRespondent(token, { method: 'POST', url: '/api/v1/respond/assessment/submit' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.message).toBe('assessment is already submitted');
    const lateFile = await uploadAs(token, { question_id: upload.id });
    expect(lateFile.statusCode).toBe(400);
    expect(lateFile.json().error.message).toBe('assessment is submitted: responses are read-only');
    // Still readable (read-only), and the reviewer may not send a new link for a submitted assessment.
    expect((await asRespondent(token, { method: 'GET', url: '/api/v1/respond/assessment' })).json().status).toBe('submitted');
    const noLink = await createLink(aId, { name: 'Again' });
    expect(noLink.statusCode).toBe(409);
    expect(noLink.json().error.message).toBe('assessment is submitted: it can no longer be answered, so no link can be sent for it');

    // Separation of duties: the reviewer who was shown the link's token could have answered through it,
    // so another reviewer approves. A link for an approved assessment is 409 too.
    const own = await call(t.app, reviewer(), { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/approve` });
    expect(own.statusCode).toBe(403);
    expect(own.json().error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'you were shown a respondent link of this assessment that has been used: another reviewer must review it',
    });
    await call(t.app, tenant.admin.token, { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/approve`, expect: 200 });
    const approved = await createLink(aId, { name: 'Again' });
    expect(approved.statusCode).toBe(409);
    expect(approved.json().error.message).toBe('assessment is approved: it can no longer be answered, so no link can be sent for it');
  });

  it('413 above 50 MiB, and nothing is kept', async () => {
    const { aId, token } = await newLink();
    const big = Buffer.alloc(MAX_EVIDENCE_BYTES + 1);
    big.write('%PDF-1.7\n');
    const res = await uploadAs(token, { question_id: upload.id }, { filename: 'big.pdf', contentType: 'application/pdf', content: big });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'evidence file exceeds the 50 MiB limit' });
    expect(await t.deps.database.db.selectFrom('attestation_evidence').select('id').where('assessment_id', '=', aId).execute()).toEqual([]);
  });

  it('401 LINK_EXPIRED once the link has expired, on every respondent route, each refusal audited', async () => {
    const { token, link } = await newLink({ name: 'Late', expires_in_days: 1 });
    // The last test of this app: its clock stays a day ahead.
    t.clock.advance(86_400_000);
    {
      const routes: Array<[string, string]> = [
        ['GET', '/api/v1/respond/assessment'],
        ['POST', '/api/v1/respond/assessment/responses'],
        ['POST', '/api/v1/respond/assessment/submit'],
        ['GET', '/api/v1/respond/evidence'],
      ];
      for (const [method, url] of routes) {
        const res = await asRespondent(token, {
          method: method as 'GET',
          url,
          ...(method === 'POST' && url.endsWith('responses') ? { payload: { responses: [{ question_id: 'x', answer: 'y' }] } } : {}),
        });
        expect(res.statusCode, url).toBe(401);
        expect(res.json().error).toMatchObject({ code: 'LINK_EXPIRED', message: 'this link has expired: ask the sender for a new link' });
      }
      const file = await uploadAs(token, { question_id: upload.id });
      expect(file.json().error.code).toBe('LINK_EXPIRED');
      expect((await auditOf(t, tenant.id, 'assessment_link.refused')).filter((e) => e.actor_id === link.id && (e.details as { reason: string }).reason === 'expired')).toHaveLength(
        5,
      );
      // A day later the reviewer signs in again (access tokens live an hour).
      const session = await fresh(t, tenant.users['security-analyst']);
      const listed = (await call(t.app, session.token, { method: 'GET', url: linksUrl(link.assessment_id), expect: 200 })).json();
      expect(listed.items[0]).toMatchObject({ id: link.id, status: 'expired' });
    }
  });
});

describe('without artifact storage', () => {
  it('the respondent evidence routes answer 503', async () => {
    const bare = await createTestApp({ artifactStore: 'none' });
    try {
      const owner = await buildTenant(bare);
      const q = await fromTemplate(bare, owner.admin.token, owner.id, { template_id: 'fedramp-at' });
      await publish(bare, owner.admin.token, owner.id, q.id);
      const [a] = await assign(bare, owner.admin.token, owner.id, q.id, { assignees: [owner.users['read-only'].user_id] });
      const { token } = (
        await call(bare.app, owner.admin.token, { method: 'POST', url: `${api(owner.id)}/assessments/${a!.id}/links`, payload: { name: 'x' }, expect: 201 })
      ).json();
      const list = await call(bare.app, token, { method: 'GET', url: '/api/v1/respond/evidence' });
      expect(list.statusCode).toBe(503);
      expect(list.json().error.message).toBe('artifact storage not configured');
      const body = multipart({ question_id: 'x' }, { filename: 'a.pdf', contentType: 'application/pdf', content: PDF });
      const up = await call(bare.app, token, { method: 'POST', url: '/api/v1/respond/evidence', payload: body.payload, headers: body.headers });
      expect(up.statusCode).toBe(503);
    } finally {
      await bare.close();
    }
  });
});
