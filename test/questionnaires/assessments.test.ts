import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, type Session, type TenantFixture } from '../harness/identity.js';
import { ALL_TYPES, api, assign, auditOf, publish, respond, uploadEvidence } from './helpers.js';

/**
 * The assessment endpoints and their status codes: answers checked against the question types and
 * saved incrementally, required questions enforced at submit, list / mine / review-queue, review
 * with its aliases and guards (never one's own assessment), and generate-poam through the POA&M
 * module's store.
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let qId: string;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const q = (
    await call(t.app, tenant.admin.token, { method: 'POST', url: `${api(tenant.id)}/questionnaires`, payload: { title: 'Site security', questions: ALL_TYPES }, expect: 201 })
  ).json();
  qId = q.id;
  await publish(t, tenant.admin.token, tenant.id, qId);
});
afterAll(() => t.close());

const admin = () => tenant.admin.token;
const url = (path = '') => `${api(tenant.id)}/assessments${path}`;
const VALID: Record<string, string> = {
  policy: 'yes',
  cadence: 'yearly',
  areas: 'doors,cameras',
  owner: 'Facilities',
  describe: 'Badge readers\nand a log',
  'last-test': '2026-10-01',
  coverage: '87.5',
};

/** A fresh assessment of the questionnaire for a user (each test gets its own). */
async function assessmentFor(user: Session, extra: Record<string, unknown> = {}) {
  const [a] = await assign(t, admin(), tenant.id, qId, { assignees: [user.user_id], ...extra });
  return a!.id as string;
}

/** Answers everything (the upload too) and submits. */
async function answerAndSubmit(user: Session, id: string) {
  await call(t.app, user.token, {
    method: 'POST',
    url: url(`/${id}/respond`),
    payload: { responses: Object.entries(VALID).map(([question_id, answer]) => ({ question_id, answer })) },
    expect: 200,
  });
  const e = (await uploadEvidence(t, user.token, tenant.id, { assessment_id: id, question_id: 'evidence' })).json();
  await call(t.app, user.token, { method: 'POST', url: url(`/${id}/respond`), payload: { responses: [{ question_id: 'evidence', answer: e.id }] }, expect: 200 });
  return call(t.app, user.token, { method: 'POST', url: url(`/${id}/submit`), expect: 200 });
}

describe('POST /assessments/{aID}/respond', () => {
  let aId: string;
  const respondent = () => tenant.users['read-only'];
  beforeAll(async () => {
    aId = await assessmentFor(respondent());
  });

  it('400 for answers that do not fit the question type, listing every problem; nothing is saved', async () => {
    const bad: Array<[string, string, string]> = [
      ['policy', 'maybe', 'answer must be "yes" or "no"'],
      ['cadence', 'monthly', 'answer must be one of yearly, never'],
      ['areas', 'doors, racks', 'unknown option " racks": answer is option values separated by commas (no spaces), of doors, racks, cameras'],
      ['owner', 'two\nlines', 'a text_short answer is one line'],
      ['last-test', '2026-02-30', 'answer must be a date YYYY-MM-DD'],
      ['coverage', '101', 'answer must be at most 100'],
      ['evidence', 'not-an-id', 'answer must be attestation-evidence ids separated by commas'],
      ['nope', 'x', 'no such question in this questionnaire'],
    ];
    const res = await respond(
      t,
      respondent().token,
      tenant.id,
      aId,
      bad.map(([question_id, answer]) => ({ question_id, answer })),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', message: 'invalid response for question "policy": answer must be "yes" or "no"' });
    expect(res.json().error.details.errors).toEqual(bad.map(([question_id, , message]) => ({ question_id, message })));
    const more: Array<[unknown, string]> = [
      [{ question_id: 'areas', answer: 'doors,doors' }, 'an option is chosen twice'],
      [{ question_id: 'coverage', answer: '-1' }, 'answer must be at least 0'],
      [{ question_id: 'coverage', answer: '1e3' }, 'answer must be a decimal number such as "87.5" or "-12"'],
      [{ question_id: 'owner' }, 'give an answer, notes, or both'],
      [{ question_id: 'owner', answer: 'x'.repeat(501) }, 'a text_short answer has at most 500 characters'],
    ];
    for (const [item, message] of more) {
      const r = await respond(t, respondent().token, tenant.id, aId, [item]);
      expect([r.statusCode, r.json().error.details.errors[0].message], JSON.stringify(item)).toEqual([400, message]);
    }
    const twice = await respond(t, respondent().token, tenant.id, aId, [
      { question_id: 'owner', answer: 'a' },
      { question_id: 'owner', answer: 'b' },
    ]);
    expect(twice.json().error.details.errors).toEqual([{ question_id: 'owner', message: 'question answered twice in one request' }]);
    expect((await respond(t, respondent().token, tenant.id, aId, [])).statusCode).toBe(400);
    expect((await respond(t, respondent().token, tenant.id, aId, [{ question_id: 'owner', answer: 'x', colour: 'red' }])).statusCode).toBe(400);
    const untouched = (await call(t.app, admin(), { url: url(`/${aId}`), expect: 200 })).json();
    expect(untouched).toMatchObject({ status: 'assigned', responses: [], progress: { answered: 0 } });
  });

  it('saves incrementally (optional questions alone are fine); notes keep; "" clears an answer', async () => {
    const first = await respond(t, respondent().token, tenant.id, aId, [{ question_id: 'owner', answer: 'Facilities', notes: 'ask Bob' }]);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'in_progress', progress: { total: ALL_TYPES.length, answered: 1, required: 4, required_answered: 0 } });
    const second = (
      await respond(t, respondent().token, tenant.id, aId, [
        { question_id: 'policy', answer: 'no' },
        { question_id: 'owner', answer: 'Security' },
      ])
    ).json();
    expect(second.responses.map((r: { question_id: string; answer: string; notes: string }) => [r.question_id, r.answer, r.notes])).toEqual([
      ['policy', 'no', ''],
      ['owner', 'Security', 'ask Bob'],
    ]);
    const cleared = (await respond(t, respondent().token, tenant.id, aId, [{ question_id: 'owner', answer: '' }])).json();
    expect(cleared.progress.answered).toBe(1);
    expect((await auditOf(t, tenant.id, 'assessment.responded')).filter((e) => e.target_id === aId)).toHaveLength(3);
  });

  it('required questions are enforced at submit: 400 naming the unanswered ones', async () => {
    const res = await call(t.app, respondent().token, { method: 'POST', url: url(`/${aId}/submit`) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'required questions are not answered: cadence, describe, evidence',
      details: { missing: ['cadence', 'describe', 'evidence'] },
    });
  });

  it('403 for anyone but the assignee (an admin too); 404 for another tenant or an unknown id; 401 without a token', async () => {
    const res = await respond(t, admin(), tenant.id, aId, [{ question_id: 'policy', answer: 'yes' }]);
    expect([res.statusCode, res.json().error.message]).toEqual([403, 'only the assignee may answer this assessment']);
    const submit = await call(t.app, admin(), { method: 'POST', url: url(`/${aId}/submit`) });
    expect([submit.statusCode, submit.json().error.message]).toEqual([403, 'only the assignee may answer this assessment']);
    expect((await respond(t, other.admin.token, other.id, aId, [{ question_id: 'policy', answer: 'yes' }])).statusCode).toBe(404);
    const missing = await respond(t, admin(), tenant.id, '00000000-0000-4000-8000-000000000000', [{ question_id: 'policy', answer: 'yes' }]);
    expect([missing.statusCode, missing.json().error.message]).toEqual([404, 'assessment not found']);
    expect((await t.app.inject({ method: 'POST', url: url(`/${aId}/respond`), payload: { responses: [{ question_id: 'policy', answer: 'yes' }] } })).statusCode).toBe(401);
  });

  it('submit makes it read-only: respond 400, submit again 409; approved: respond 400', async () => {
    const submitted = await answerAndSubmit(respondent(), aId);
    expect(submitted.json()).toMatchObject({ status: 'submitted', submitted_at: t.clock.now().toISOString() });
    const res = await respond(t, respondent().token, tenant.id, aId, [{ question_id: 'policy', answer: 'yes' }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', message: 'assessment is submitted: responses are read-only' });
    const again = await call(t.app, respondent().token, { method: 'POST', url: url(`/${aId}/submit`) });
    expect([again.statusCode, again.json().error.message]).toEqual([409, 'assessment is already submitted']);
    const approved = (await call(t.app, admin(), { method: 'POST', url: url(`/${aId}/approve`), expect: 200 })).json();
    // Every mapped control is attested, those of unscored frameworks too (reported, not scored).
    expect([...approved.controls].sort()).toEqual(['nist-800-171:3.10.1', 'nist-800-53:PE-1', 'nist-800-53:PE-2', 'nist-800-53:PE-3']);
    const attested = (await call(t.app, admin(), { url: `${api(tenant.id)}/controls/attestations?framework=nist-800-171`, expect: 200 })).json();
    expect(attested.items).toEqual([expect.objectContaining({ framework: 'nist-800-171', control_id: '3.10.1', status: 'attested', assessment_id: aId, title: '3.10.1' })]);
    const unknown = await call(t.app, admin(), { url: `${api(tenant.id)}/controls/attestations?framework=nope` });
    expect([unknown.statusCode, unknown.json().error.message]).toEqual([400, expect.stringMatching(/^unknown framework "nope"/)]);
    const afterApproval = await respond(t, respondent().token, tenant.id, aId, [{ question_id: 'policy', answer: 'yes' }]);
    expect([afterApproval.statusCode, afterApproval.json().error.message]).toEqual([400, 'assessment is approved: responses are read-only']);
  });
});

describe('GET /assessments, /assessments/mine, /assessments/review-queue', () => {
  let mineId: string;
  let analystId: string;
  let namedId: string;
  beforeAll(async () => {
    mineId = await assessmentFor(tenant.users.auditor);
    analystId = await assessmentFor(tenant.users['security-analyst']);
    // A second apart, so the review queue's oldest-first order is defined.
    await answerAndSubmit(tenant.users.auditor, mineId);
    t.clock.advance(1000);
    await answerAndSubmit(tenant.users['security-analyst'], analystId);
    t.clock.advance(1000);
    const reviewer = await addUser(t, tenant, 'security-analyst');
    const assignee = await addUser(t, tenant, 'read-only');
    namedId = await assessmentFor(assignee, { reviewer_id: reviewer.user_id });
    await answerAndSubmit(assignee, namedId);
  });

  it('lists newest first, paged and filtered; another tenant sees none', async () => {
    const page = (await call(t.app, tenant.users['read-only'].token, { url: url('?per_page=2'), expect: 200 })).json();
    expect(page).toMatchObject({ page: 1, per_page: 2 });
    expect(page.total).toBeGreaterThanOrEqual(4);
    expect(page.items[0].created_at >= page.items[1].created_at).toBe(true);
    const submitted = (await call(t.app, admin(), { url: url(`?status=submitted&questionnaire_id=${qId}&per_page=100`), expect: 200 })).json();
    expect(submitted.items.map((a: { id: string }) => a.id).sort()).toEqual([mineId, analystId, namedId].sort());
    const byAssignee = (await call(t.app, admin(), { url: url(`?assignee_id=${tenant.users.auditor.user_id}`), expect: 200 })).json();
    expect(byAssignee.items.map((a: { id: string }) => a.id)).toEqual([mineId]);
    expect(byAssignee.items[0]).toMatchObject({ questionnaire_title: 'Site security', assignee: tenant.users.auditor.username, progress: { required_answered: 4 } });
    expect((await call(t.app, admin(), { url: url('?status=done') })).statusCode).toBe(400);
    expect((await call(t.app, other.admin.token, { url: `${api(other.id)}/assessments`, expect: 200 })).json().total).toBe(0);
  });

  it("mine: only the caller's own", async () => {
    const mine = (await call(t.app, tenant.users.auditor.token, { url: url('/mine'), expect: 200 })).json();
    expect(mine.items.map((a: { id: string }) => a.id)).toEqual([mineId]);
    expect((await call(t.app, tenant.users.auditor.token, { url: url('/mine?status=approved'), expect: 200 })).json().total).toBe(0);
  });

  it("review-queue: submitted ones, oldest first, never the caller's own nor one named for another reviewer; 403 without assessment:review", async () => {
    const queueOf = async (token: string) => (await call(t.app, token, { url: url('/review-queue'), expect: 200 })).json().items.map((a: { id: string }) => a.id);
    expect(await queueOf(tenant.users['security-analyst'].token)).toEqual([mineId]);
    expect(await queueOf(admin())).toEqual([mineId, analystId]);
    const denied = await call(t.app, tenant.users.auditor.token, { url: url('/review-queue') });
    expect([denied.statusCode, denied.json().error.message]).toEqual([403, 'missing permission assessment:review']);
  });

  it("review: 403 for one's own assessment (review and both aliases) and for anyone but the named reviewer", async () => {
    const analyst = tenant.users['security-analyst'].token;
    for (const [path, payload] of [
      ['review', { review_status: 'approved' }],
      ['approve', undefined],
      ['reject', { notes: 'no' }],
    ] as const) {
      const res = await call(t.app, analyst, { method: 'POST', url: url(`/${analystId}/${path}`), ...(payload ? { payload } : {}) });
      expect([res.statusCode, res.json().error.message], path).toEqual([403, 'you cannot review your own assessment']);
    }
    const named = await call(t.app, admin(), { method: 'POST', url: url(`/${namedId}/approve`) });
    expect([named.statusCode, named.json().error.message]).toEqual([403, 'this assessment is assigned to another reviewer']);
    const readOnly = await call(t.app, tenant.users['read-only'].token, { method: 'POST', url: url(`/${mineId}/approve`) });
    expect([readOnly.statusCode, readOnly.json().error.message]).toEqual([403, 'missing permission assessment:review']);
  });

  it('review: 400 for an unknown review_status, rejecting without notes, a gap of an unknown question', async () => {
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ review_status: 'maybe' }, /review_status/],
      [{ review_status: 'rejected' }, 'notes are required when rejecting: say what needs to change'],
      [{ review_status: 'rejected', notes: 'x', gaps: [{ question_id: 'nope' }] }, 'gap names unknown question "nope"'],
      [{ review_status: 'rejected', notes: 'x', gaps: [{ question_id: 'policy' }, { question_id: 'policy' }] }, 'gap for question "policy" given twice'],
      [{ review_status: 'approved', gaps: [{ question_id: 'policy', severity: 'SEVERE' }] }, /severity/],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, admin(), { method: 'POST', url: url(`/${mineId}/review`), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      if (typeof message === 'string') expect(res.json().error.message).toBe(message);
      else expect(res.json().error.message).toMatch(message);
    }
    const noNotes = await call(t.app, admin(), { method: 'POST', url: url(`/${mineId}/reject`) });
    expect([noNotes.statusCode, noNotes.json().error.message]).toEqual([400, 'notes are required when rejecting: say what needs to change']);
  });

  it('review with rejected: changes_requested, with an event and audit; 409 for anything not submitted', async () => {
    const res = await call(t.app, admin(), { method: 'POST', url: url(`/${mineId}/review`), payload: { review_status: 'rejected', notes: 'add the camera log' }, expect: 200 });
    expect(res.json()).toMatchObject({ status: 'changes_requested', review_status: 'rejected', review_notes: 'add the camera log', reviewed_by: tenant.admin.user_id });
    const again = await call(t.app, admin(), { method: 'POST', url: url(`/${mineId}/review`), payload: { review_status: 'approved' } });
    expect([again.statusCode, again.json().error.message]).toEqual([409, 'only submitted assessments can be reviewed (this one is changes_requested)']);
    expect((await auditOf(t, tenant.id, 'assessment.rejected')).map((e) => e.target_id)).toContain(mineId);
    const events = await t.deps.database.db
      .selectFrom('outbox_events')
      .select('data')
      .where('tenant_id', '=', tenant.id)
      .where('type', '=', 'assessment.changes_requested')
      .execute();
    expect(events.map((e) => (e.data as { assessment_id: string }).assessment_id)).toContain(mineId);
    expect((await call(t.app, admin(), { method: 'POST', url: url('/00000000-0000-4000-8000-000000000000/approve') })).statusCode).toBe(404);
  });
});

describe('POST /assessments/{aID}/generate-poam', () => {
  let rejectedId: string;
  const respondent = () => tenant.users['tenant-admin'];
  const poam = (id: string) => call(t.app, admin(), { url: `${api(tenant.id)}/poam/${id}`, expect: 200 }).then((r) => r.json());
  const generate = (id: string, payload?: Record<string, unknown>, token = tenant.users['security-analyst'].token) =>
    call(t.app, token, { method: 'POST', url: url(`/${id}/generate-poam`), ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    rejectedId = await assessmentFor(respondent());
  });

  it('409 while neither rejected nor gapped', async () => {
    const res = await generate(rejectedId);
    expect(res.statusCode).toBe(409);
    expect(res.json().error.message).toBe('assessment is assigned without flagged gaps: POA&M items are raised from a rejected assessment or from gaps its review flagged');
  });

  it('a rejection without gaps raises one item for the whole assessment (201), and the same item again after (200)', async () => {
    await answerAndSubmit(respondent(), rejectedId);
    await call(t.app, tenant.users['security-analyst'].token, { method: 'POST', url: url(`/${rejectedId}/reject`), payload: { notes: 'no camera coverage' }, expect: 200 });
    const res = await generate(rejectedId);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ created: 1, existing: 0 });
    expect(body.items[0]).toMatchObject({
      id: expect.stringMatching(/^POAM-\d+$/),
      weakness_name: 'Site security: changes requested in review',
      severity: 'MEDIUM',
      status: 'open',
      point_of_contact: respondent().username,
      source: `assessment:${rejectedId}`,
    });
    expect(body.items[0].weakness_description).toContain('Review notes: no camera coverage');
    expect([...body.items[0].control_ids].sort()).toEqual(['PE-1', 'PE-2', 'PE-3', 'nist-800-171:3.10.1']);
    expect((await poam(body.items[0].id)).id).toBe(body.items[0].id);
    const again = await generate(rejectedId);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ created: 0, existing: 1, items: [{ id: body.items[0].id }] });
    expect((await auditOf(t, tenant.id, 'assessment.poam_generated')).filter((e) => e.target_id === rejectedId)).toHaveLength(1);
  });

  it('question_ids raise one item per question; 400 for an unknown question or one without control mappings', async () => {
    const res = await generate(rejectedId, { question_ids: ['describe', 'policy'], severity: 'HIGH', point_of_contact: 'facilities-team', scheduled_completion: '2027-01-31' });
    expect(res.statusCode).toBe(201);
    expect(
      res
        .json()
        .items.map((i: { weakness_name: string; severity: string; point_of_contact: string; scheduled_completion: string; control_ids: string[] }) => [
          i.weakness_name,
          i.severity,
          i.point_of_contact,
          i.scheduled_completion,
          i.control_ids,
        ]),
    ).toEqual([
      ['Site security: Describe the procedure.', 'HIGH', 'facilities-team', '2027-01-31', ['PE-3', 'nist-800-171:3.10.1']],
      ['Site security: Is there an approved policy?', 'HIGH', 'facilities-team', '2027-01-31', ['PE-1']],
    ]);
    expect(res.json().items[0].weakness_description).toContain('Answer: Badge readers\nand a log');
    const unknown = await generate(rejectedId, { question_ids: ['nope'] });
    expect([unknown.statusCode, unknown.json().error.message]).toEqual([400, 'question "nope" is not in this assessment\'s questionnaire']);
    const unmapped = await generate(rejectedId, { question_ids: ['owner'] });
    expect([unmapped.statusCode, unmapped.json().error.message]).toEqual([400, 'question "owner" maps to no control: a POA&M item needs at least one']);
    expect((await generate(rejectedId, { severity: 'SEVERE' })).statusCode).toBe(400);
  });

  it('an approval with flagged gaps raises one item per gap at its severity; a deleted item is raised again', async () => {
    await respond(t, respondent().token, tenant.id, rejectedId, [{ question_id: 'coverage', answer: '40' }]);
    await call(t.app, respondent().token, { method: 'POST', url: url(`/${rejectedId}/submit`), expect: 200 });
    await call(t.app, tenant.users['security-analyst'].token, {
      method: 'POST',
      url: url(`/${rejectedId}/approve`),
      payload: { notes: 'accepted with a gap', gaps: [{ question_id: 'areas', severity: 'LOW', notes: 'racks not covered' }] },
      expect: 200,
    });
    const res = await generate(rejectedId);
    expect(res.statusCode).toBe(201);
    const [item] = res.json().items;
    expect(item).toMatchObject({ severity: 'LOW', control_ids: ['PE-3'], weakness_name: 'Site security: Which areas are covered?' });
    expect(item.weakness_description).toContain('Reviewer: racks not covered');
    await call(t.app, admin(), { method: 'DELETE', url: `${api(tenant.id)}/poam/${item.id}`, expect: 200 });
    const again = await generate(rejectedId);
    expect(again.statusCode).toBe(201);
    expect(again.json().items[0].id).not.toBe(item.id);
  });

  it('403 without poam:write; 404 for another tenant', async () => {
    const denied = await generate(rejectedId, undefined, tenant.users.auditor.token);
    expect([denied.statusCode, denied.json().error.message]).toEqual([403, 'missing permission poam:write']);
    expect((await call(t.app, other.admin.token, { method: 'POST', url: `${api(other.id)}/assessments/${rejectedId}/generate-poam` })).statusCode).toBe(404);
  });
});
