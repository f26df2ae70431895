import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { sendExpiryReminders, sweepExpiredAttestations } from '../../src/modules/questionnaires/control-status.js';
import { api, assign, auditOf, eventsOf, publish, respond, uploadEvidence, validAnswer, type QuestionJson } from './helpers.js';

/**
 * The whole flow of the spec's "Assessment and control status" table, end to end over HTTP: a
 * template becomes a questionnaire, is published and assigned; the assignee (a read-only user)
 * answers incrementally, uploads evidence and submits; a reviewer requests changes, then approves;
 * the mapped controls are attested and count in /controls/status; reminders come 60, 30 and 7 days
 * before expiry; at expiry the controls are not assessed again.
 */
let t: TestApp;
let tenant: TenantFixture;
const DAY = 86_400_000;
const CONTROLS = ['AT-1', 'AT-2', 'AT-2(1)', 'AT-2(2)', 'AT-2(3)', 'AT-3', 'AT-4'].map((c) => `nist-800-53:${c}`);

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const users = async () => ({
  admin: (await fresh(t, tenant.admin)).token,
  respondent: (await fresh(t, tenant.users['read-only'])).token,
  reviewer: (await fresh(t, tenant.users['security-analyst'])).token,
  auditor: (await fresh(t, tenant.users.auditor)).token,
});
const score = async (token: string) => (await call(t.app, token, { url: `${api(tenant.id)}/controls/status?framework=nist-800-53`, expect: 200 })).json().overall_score as number;
const attestations = async (token: string, query = '') =>
  (await call(t.app, token, { url: `${api(tenant.id)}/controls/attestations?framework=nist-800-53${query}`, expect: 200 })).json();
const statusesOf = async (token: string) => {
  const list = await attestations(token);
  return Object.fromEntries(list.items.map((c: { framework: string; control_id: string; status: string }) => [`${c.framework}:${c.control_id}`, c.status]));
};
const stored = () => t.deps.database.db.selectFrom('control_attestations').selectAll().where('tenant_id', '=', tenant.id).orderBy('control_id').execute();
const allAre = (statuses: Record<string, string>, status: string) => CONTROLS.every((c) => statuses[c] === status);

describe('template → questionnaire → assessment → attested control → expiry', () => {
  let qId: string;
  let aId: string;
  let questions: QuestionJson[];
  let s: Awaited<ReturnType<typeof users>>;
  let before: number;

  it('creates a draft from a template in the language of Accept-Language and publishes it', async () => {
    s = await users();
    before = await score(s.admin);
    expect(before).toBe(100);
    const res = await call(t.app, s.admin, {
      method: 'POST',
      url: `${api(tenant.id)}/questionnaires/from-template`,
      headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' },
      payload: { template_id: 'fedramp-at', due_date: '2026-12-31' },
      expect: 201,
    });
    const q = res.json();
    expect(q).toMatchObject({ status: 'draft', lang: 'de', template_id: 'fedramp-at', version: 1, attestation_validity_days: 365, framework: 'nist-800-53' });
    expect(q.title).toMatch(/Schulung/);
    qId = q.id;
    questions = q.questions;
    expect((await publish(t, s.admin, tenant.id, qId)).status).toBe('published');
    // Publishing alone attests nothing and assigns nothing: the controls are listed, not assessed.
    expect(await stored()).toEqual([]);
    expect(allAre(await statusesOf(s.admin), 'not_assessed')).toBe(true);
    expect((await attestations(s.admin)).counts).toMatchObject({ not_assessed: CONTROLS.length, attested: 0 });
    expect(await score(s.admin)).toBe(before);
  });

  it('assigning creates one assessment per assignee; the controls become questionnaire_assigned and applicable', async () => {
    const items = await assign(t, s.admin, tenant.id, qId, { assignees: [tenant.users['read-only'].username], reviewer_id: tenant.users['security-analyst'].user_id });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      status: 'assigned',
      assignee_id: tenant.users['read-only'].user_id,
      reviewer_id: tenant.users['security-analyst'].user_id,
      due_date: '2026-12-31',
    });
    expect([...items[0]!.controls].sort()).toEqual([...CONTROLS].sort());
    aId = items[0]!.id;
    expect(allAre(await statusesOf(s.admin), 'questionnaire_assigned')).toBe(true);
    expect((await stored()).map((r) => r.status)).toEqual(CONTROLS.map(() => 'questionnaire_assigned'));
    expect(await score(s.admin)).toBeLessThan(before);
    const gaps = (await call(t.app, s.admin, { url: `${api(tenant.id)}/controls/gaps?framework=nist-800-53&per_page=500`, expect: 200 })).json();
    expect(gaps.items).toContainEqual(expect.objectContaining({ control_id: 'AT-2', status: 'not_attested', attestation_status: 'questionnaire_assigned' }));
    const mine = (await call(t.app, s.respondent, { url: `${api(tenant.id)}/assessments/mine`, expect: 200 })).json();
    expect(mine.items.map((a: { id: string }) => a.id)).toEqual([aId]);
  });

  it('the read-only assignee answers incrementally: in_progress', async () => {
    const first = questions.slice(0, 3).map((q) => ({ question_id: q.id, answer: validAnswer(q), notes: 'first pass' }));
    const res = await respond(t, s.respondent, tenant.id, aId, first);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'in_progress', progress: { answered: 3, total: questions.length } });
    expect(allAre(await statusesOf(s.admin), 'in_progress')).toBe(true);
    // A second save keeps the first one.
    const rest = questions
      .filter((q) => q.type !== 'file_upload')
      .slice(3)
      .map((q) => ({ question_id: q.id, answer: validAnswer(q) }));
    const second = (await respond(t, s.respondent, tenant.id, aId, rest)).json();
    expect(second.progress.answered).toBe(questions.length - 1);
    expect(second.responses.find((r: { question_id: string }) => r.question_id === questions[0]!.id)).toMatchObject({ notes: 'first pass' });
  });

  it('uploads evidence and answers the file_upload question with its id; submitting is then possible and read-only', async () => {
    const upload = questions.find((q) => q.type === 'file_upload')!;
    const submitEarly = await call(t.app, s.respondent, { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/submit` });
    expect(submitEarly.statusCode).toBe(400);
    expect(submitEarly.json().error.details.missing).toEqual([upload.id]);
    const evidence = await uploadEvidence(t, s.respondent, tenant.id, { assessment_id: aId, question_id: upload.id });
    expect(evidence.statusCode).toBe(201);
    const eId = evidence.json().id as string;
    expect((await respond(t, s.respondent, tenant.id, aId, [{ question_id: upload.id, answer: eId }])).statusCode).toBe(200);
    const submitted = await call(t.app, s.respondent, { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/submit`, expect: 200 });
    expect(submitted.json()).toMatchObject({ status: 'submitted', progress: { required_answered: submitted.json().progress.required } });
    expect(allAre(await statusesOf(s.admin), 'submitted')).toBe(true);
    const again = await respond(t, s.respondent, tenant.id, aId, [{ question_id: questions[0]!.id, answer: 'no' }]);
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toMatchObject({ code: 'BAD_REQUEST', message: 'assessment is submitted: responses are read-only' });
  });

  it('the reviewer requests changes (reject alias): changes_requested, back to the respondent, then in_progress', async () => {
    const queue = (await call(t.app, s.reviewer, { url: `${api(tenant.id)}/assessments/review-queue`, expect: 200 })).json();
    expect(queue.items.map((a: { id: string }) => a.id)).toEqual([aId]);
    const rejected = await call(t.app, s.reviewer, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${aId}/reject`,
      payload: { notes: 'attach the LMS export' },
      expect: 200,
    });
    expect(rejected.json()).toMatchObject({ status: 'changes_requested', review_status: 'rejected', review_notes: 'attach the LMS export' });
    expect(allAre(await statusesOf(s.admin), 'changes_requested')).toBe(true);
    const edited = await respond(t, s.respondent, tenant.id, aId, [{ question_id: questions[0]!.id, notes: 'LMS export attached' }]);
    expect(edited.json().status).toBe('in_progress');
    expect(allAre(await statusesOf(s.admin), 'in_progress')).toBe(true);
    await call(t.app, s.respondent, { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/submit`, expect: 200 });
  });

  it('approval attests the mapped controls for attestation_validity_days and they count in /controls/status', async () => {
    const now = t.clock.now();
    // What the reviewer is told before approving: the controls, and for how long (the review queue and the assessment say so).
    const queue = (await call(t.app, s.reviewer, { url: `${api(tenant.id)}/assessments/review-queue`, expect: 200 })).json();
    expect(queue.items.find((a: { id: string }) => a.id === aId)).toMatchObject({ attestation_validity_days: 365, controls: expect.arrayContaining(CONTROLS) });
    expect((await call(t.app, s.reviewer, { url: `${api(tenant.id)}/assessments/${aId}`, expect: 200 })).json().attestation_validity_days).toBe(365);
    const approved = await call(t.app, s.reviewer, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${aId}/review`,
      payload: { review_status: 'approved', notes: 'complete' },
      expect: 200,
    });
    const expires = new Date(now.getTime() + 365 * DAY).toISOString();
    expect(approved.json()).toMatchObject({ status: 'approved', review_status: 'approved', attestation_expires_at: expires, attestation_state: 'current' });
    expect(approved.json().reviews.map((r: { review_status: string }) => r.review_status)).toEqual(['rejected', 'approved']);
    const list = await attestations(s.admin);
    expect(list.items.filter((c: { status: string }) => c.status === 'attested')).toHaveLength(CONTROLS.length);
    expect(list.items[0]).toMatchObject({ status: 'attested', assessment_id: aId, questionnaire_id: qId, expires_at: expires, expiring_soon: false, expiry_warning: null });
    expect((await stored()).every((r) => r.status === 'attested' && new Date(r.expires_at!).toISOString() === expires)).toBe(true);
    expect(await score(s.admin)).toBe(100);
    const respondAfter = await respond(t, s.respondent, tenant.id, aId, [{ question_id: questions[0]!.id, answer: 'no' }]);
    expect(respondAfter.statusCode).toBe(400);
    expect(respondAfter.json().error.message).toBe('assessment is approved: responses are read-only');
    const event = (await eventsOf(t, tenant.id, 'assessment.approved')).at(-1)!;
    expect(event.data).toMatchObject({ assessment_id: aId, attestation_expires_at: expires });
    expect([...(event.data as { controls: string[] }).controls].sort()).toEqual([...CONTROLS].sort());
  });

  it('reminders 60, 30 and 7 days before expiry, each exactly once; expiring_soon in the last 7 days, in /controls/status too', async () => {
    const approvedAt = t.clock.now().getTime();
    const expiresAt = approvedAt + 365 * DAY;
    expect(await sendExpiryReminders(t.deps)).toBe(0);
    expect((await attestations(s.admin)).items[0].reminder_sent_days).toBeNull();
    const days = [];
    // 20 and 5 days out lie between the reminder stages: no reminder, but the marks of their stage.
    for (const d of [60, 30, 20, 7, 5]) {
      const stage = d === 60 || d === 30 || d === 7;
      t.clock.set(new Date(expiresAt - d * DAY + 60_000));
      expect(await sendExpiryReminders(t.deps)).toBe(stage ? 1 : 0);
      expect(await sendExpiryReminders(t.deps)).toBe(0);
      if (stage) days.push(d);
      s = await users();
      const marks = (await attestations(s.admin)).items[0];
      expect(marks).toMatchObject({ status: 'attested', expiring_soon: d <= 7, expiry_warning: d === 60 ? 'notice' : d >= 20 ? 'warning' : 'urgent' });
      // The list says which reminder went out last: the stage sent at or before this day.
      expect(marks.reminder_sent_days).toBe(d >= 30 ? d : d >= 20 ? 30 : 7);
      // Both endpoints mean the same by expiring soon.
      const status = (await call(t.app, s.admin, { url: `${api(tenant.id)}/controls/status?framework=nist-800-53`, expect: 200 })).json();
      expect(status.attestations).toMatchObject({ attested: CONTROLS.length, expiring_soon: d <= 7 ? CONTROLS.length : 0 });
    }
    const reminders = await eventsOf(t, tenant.id, 'attestation.expiring');
    expect(reminders.map((e) => (e.data as { days_before: number }).days_before)).toEqual(days);
    expect(reminders.map((e) => (e.data as { level: string }).level)).toEqual(['notice', 'warning', 'urgent']);
    expect(reminders[2]!.data).toMatchObject({
      assessment_id: aId,
      questionnaire_id: qId,
      expires_at: new Date(expiresAt).toISOString(),
      owner: { user_id: tenant.users['read-only'].user_id },
    });
    expect((await attestations(s.admin, '&expiring_soon=true')).counts.expiring_soon).toBe(CONTROLS.length);
    expect(await auditOf(t, tenant.id, 'attestation.reminder_sent')).toHaveLength(3);
    // The status still counts the controls until the very end.
    expect(await score(s.admin)).toBe(100);
  });

  it('at expiry the controls are not assessed at once; the sweeper records it once with an event and the audit log', async () => {
    const approved = (await call(t.app, s.admin, { url: `${api(tenant.id)}/assessments/${aId}`, expect: 200 })).json();
    t.clock.set(new Date(new Date(approved.attestation_expires_at).getTime() + 1));
    s = await users();
    expect(await score(s.admin)).toBeLessThan(100);
    expect(allAre(await statusesOf(s.admin), 'not_assessed')).toBe(true);
    expect((await call(t.app, s.admin, { url: `${api(tenant.id)}/assessments/${aId}`, expect: 200 })).json().attestation_state).toBe('expired');
    expect(await sendExpiryReminders(t.deps)).toBe(0);
    expect(await sweepExpiredAttestations(t.deps)).toBe(1);
    expect(await sweepExpiredAttestations(t.deps)).toBe(0);
    expect((await stored()).map((r) => [r.status, r.expires_at])).toEqual(CONTROLS.map(() => ['not_assessed', null]));
    const expired = await eventsOf(t, tenant.id, 'attestation.expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]!.data).toMatchObject({ assessment_id: aId, expired_at: approved.attestation_expires_at });
    expect((expired[0]!.data as { controls: Array<{ status: string }> }).controls).toHaveLength(CONTROLS.length);
    expect(await auditOf(t, tenant.id, 'attestation.expired')).toHaveLength(1);
  });

  it('recorded every state change in the audit log, readable by an auditor', async () => {
    const actions = (await t.deps.database.db.selectFrom('audit_logs').select('action').where('tenant_id', '=', tenant.id).orderBy('created_at').execute()).map((r) => r.action);
    for (const action of [
      'questionnaire.created',
      'questionnaire.published',
      'assessment.assigned',
      'assessment.responded',
      'attestation_evidence.uploaded',
      'assessment.submitted',
      'assessment.rejected',
      'assessment.approved',
      'attestation.reminder_sent',
      'attestation.expired',
    ]) {
      expect(actions, action).toContain(action);
    }
    const log = await call(t.app, s.auditor, { url: `${api(tenant.id)}/audit-logs?per_page=200`, expect: 200 });
    expect(log.json().items.some((e: { action: string; target_id: string }) => e.action === 'assessment.approved' && e.target_id === aId)).toBe(true);
  });

  it('a new assessment after expiry moves the control again, and a second approval re-attests it', async () => {
    const [next] = await assign(t, s.admin, tenant.id, qId, { assignees: [tenant.users.auditor.user_id] });
    expect(allAre(await statusesOf(s.admin), 'questionnaire_assigned')).toBe(true);
    const answers = questions.filter((q) => q.type !== 'file_upload').map((q) => ({ question_id: q.id, answer: validAnswer(q) }));
    await respond(t, s.auditor, tenant.id, next!.id, answers);
    const upload = questions.find((q) => q.type === 'file_upload')!;
    const e = (await uploadEvidence(t, s.auditor, tenant.id, { assessment_id: next!.id, question_id: upload.id })).json();
    await respond(t, s.auditor, tenant.id, next!.id, [{ question_id: upload.id, answer: e.id }]);
    await call(t.app, s.auditor, { method: 'POST', url: `${api(tenant.id)}/assessments/${next!.id}/submit`, expect: 200 });
    await call(t.app, s.admin, { method: 'POST', url: `${api(tenant.id)}/assessments/${next!.id}/approve`, expect: 200 });
    expect(allAre(await statusesOf(s.admin), 'attested')).toBe(true);
    expect(await score(s.admin)).toBe(100);
  });
});
