import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { DAY, auditOf, manualItem, poamApi } from './helpers.js';

/** Items, the status flow, comments, evidence, summary and overdue over HTTP. */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let token: string;
let api: ReturnType<typeof poamApi>;
const RULE = 'aws-s3-bucket-versioning'; // MEDIUM, nist-800-53 CP-9 with NIST mappings
const HIGH_RULE = 'aws-cloudtrail-multi-region'; // HIGH, cis-aws 4.1 with NIST mappings
const findingOf = (rule: string, name: string) => `${rule}:${nodeIdOf(fixtureNode(rule, 'violating', name))}`;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  api = poamApi(t, tenant.id);
  const analyst = tenant.users['security-analyst'].token;
  await putNodes(t, analyst, tenant.id, [fixtureNode(RULE, 'violating', 'poam-b1'), fixtureNode(RULE, 'violating', 'poam-b2'), fixtureNode(HIGH_RULE, 'violating', 'poam-trail')]);
  await audit(t, analyst, tenant.id);
});
afterAll(() => t.close());
beforeEach(async () => {
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});

describe('POST /poam', () => {
  it('creates a manual item: 201, POAM-<n>, status open, default completion by severity, normalised controls, creation comment', async () => {
    const res = await api.create(
      token,
      manualItem({
        milestones: [
          { date: '2026-12-01', description: 'Enable MFA for admins' },
          { date: '2026-12-15', description: 'Enforce for all', done: false },
        ],
      }),
      201,
    );
    const item = res.json();
    expect(item).toMatchObject({
      id: expect.stringMatching(/^POAM-\d+$/),
      weakness_name: 'MFA not enforced for console users',
      control_ids: ['IA-2(1)', 'AC-2'],
      severity: 'HIGH',
      point_of_contact: 'identity-team',
      status: 'open',
      scheduled_completion: new Date(t.clock.now().getTime() + 30 * DAY).toISOString().slice(0, 10),
      milestones: [
        { date: '2026-12-01', description: 'Enable MFA for admins', done: false },
        { date: '2026-12-15', description: 'Enforce for all', done: false },
      ],
      vendor_dependency: false,
      deviation_request: null,
      finding_id: null,
      evidence_ids: [],
      source: 'manual',
      overdue: false,
    });
    expect(item.comments).toHaveLength(1);
    expect(item.comments[0]).toMatchObject({ author: tenant.users['security-analyst'].username, status_from: null, status_to: 'open' });
    const entries = await auditOf(t, tenant.id, item.id);
    expect(entries.map((e) => [e.action, e.actor_name])).toEqual([['poam.created', tenant.users['security-analyst'].username]]);
  });

  it('numbers are sequential per tenant', async () => {
    const a = (await api.create(token, manualItem(), 201)).json().id;
    const b = (await api.create(token, manualItem(), 201)).json().id;
    expect(Number(b.slice(5))).toBe(Number(a.slice(5)) + 1);
    const theirs = (await poamApi(t, other.id).create(other.users['security-analyst'].token, manualItem(), 201)).json().id;
    expect(theirs).toBe('POAM-1');
  });

  it.each([
    [{ weakness_name: '' }, 'weakness_name is required'],
    [{ severity: 'INFO' }, 'severity must be one of'],
    [{ control_ids: [] }, 'control_ids must name at least one control'],
    [{ control_ids: ['not a control'] }, 'is not a NIST SP 800-53 control id'],
    [{ scheduled_completion: '2026-13-01' }, 'scheduled_completion must be a date'],
    [{ milestones: [{ date: 'soon', description: 'x' }] }, 'milestones[0].date must be a date'],
    [{ point_of_contact: undefined }, 'point_of_contact is required'],
  ])('400 for %j', async (override, message) => {
    const res = await api.create(token, manualItem(override));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
    expect(res.json().error.message).toContain(message);
  });

  it('400 for an unknown field (closed body)', async () => {
    const res = await api.create(token, { ...manualItem(), status: 'closed' });
    expect(res.statusCode).toBe(400);
  });

  it('from a finding: name, description, severity and NIST controls from the finding, the severity default completion', async () => {
    const findingId = findingOf(RULE, 'poam-b1');
    const finding = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(findingId)}`, expect: 200 })).json();
    const item = (await api.create(token, { finding_id: findingId }, 201)).json();
    expect(item).toMatchObject({
      weakness_name: finding.title,
      weakness_description: finding.description,
      severity: 'MEDIUM',
      finding_id: findingId,
      source: 'finding',
      point_of_contact: tenant.users['security-analyst'].username,
      scheduled_completion: new Date(t.clock.now().getTime() + 90 * DAY).toISOString().slice(0, 10),
    });
    // The rule's primary NIST control only, not the 14 Prowler relates to the check (AU-9(2), CP-2(5), CP-6, …).
    expect(item.control_ids).toEqual(['CP-9']);
    expect(item.comments[0].text).toContain(findingId);

    // HIGH finding of a CIS rule: its primary NIST controls, 30 days.
    const high = (await api.create(token, { finding_id: findingOf(HIGH_RULE, 'poam-trail'), point_of_contact: 'cloud-ops' }, 201)).json();
    expect(high).toMatchObject({ severity: 'HIGH', point_of_contact: 'cloud-ops', scheduled_completion: new Date(t.clock.now().getTime() + 30 * DAY).toISOString().slice(0, 10) });
    expect(high.control_ids).toEqual(['AU-2', 'AU-12']);
    expect(high.control_ids.every((c: string) => /^[A-Z]{2}-\d+(\(\d+\))?$/.test(c))).toBe(true);
  });

  it('from a finding: 404 unknown finding, 409 when it already has an item that is not closed', async () => {
    expect((await api.create(token, { finding_id: 'aws-s3-bucket-versioning:aws:us-east-1:aws.s3.bucket:nope' })).statusCode).toBe(404);
    const res = await api.create(token, { finding_id: findingOf(RULE, 'poam-b1') });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.message).toContain('already has POA&M item');
  });

  it('default scheduled completion by severity: CRITICAL 15 days, HIGH 30, MEDIUM 90, LOW 180', async () => {
    const due = (days: number) => new Date(t.clock.now().getTime() + days * DAY).toISOString().slice(0, 10);
    for (const [severity, days] of [
      ['CRITICAL', 15],
      ['HIGH', 30],
      ['MEDIUM', 90],
      ['LOW', 180],
    ] as const) {
      const item = (await api.create(token, manualItem({ severity: severity.toLowerCase() }), 201)).json();
      expect([item.severity, item.scheduled_completion]).toEqual([severity, due(days)]);
    }
  });

  it('concurrent creates get distinct consecutive numbers', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => api.create(token, manualItem())));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    const numbers = responses.map((r) => Number(r.json().id.slice(5))).sort((a, b) => a - b);
    expect(numbers.at(-1)! - numbers[0]!).toBe(5);
    expect(new Set(numbers).size).toBe(6);
  });

  it('from a finding: 400 when the finding is not open (resolved)', async () => {
    const findingId = findingOf(RULE, 'poam-b2');
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(findingId)}/resolve`, payload: {}, expect: 200 });
    const res = await api.create(token, { finding_id: findingId });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('is resolved: POA&M items are drafted from open findings');
  });

  it('403 for read-only; 401 without a token', async () => {
    const res = await api.create(tenant.users['read-only'].token, manualItem());
    expect(res.statusCode).toBe(403);
    for (const [method, url] of [
      ['GET', api.base],
      ['POST', api.base],
      ['GET', `${api.base}/summary`],
      ['GET', `${api.base}/export?format=json`],
      ['PATCH', `${api.base}/POAM-1/status`],
    ] as const) {
      const anonymous = await call(t.app, null, { method, url, ...(method === 'GET' ? {} : { payload: {} }) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      expect(anonymous.json().error.code).toBe('UNAUTHORIZED');
    }
  });
});

describe('GET, PUT, DELETE /poam/{id}', () => {
  it('GET returns the item; 404 for unknown ids, malformed ids, and items of another tenant or workspace', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    expect((await api.get(tenant.users['read-only'].token, item.id, 200)).json()).toEqual(item);
    expect((await api.get(token, item.id.toLowerCase(), 200)).json().id).toBe(item.id);
    expect((await api.get(token, 'POAM-999999')).statusCode).toBe(404);
    expect((await api.get(token, 'banana')).statusCode).toBe(404);
    // Another tenant with its own credentials: the number does not exist there.
    const theirs = poamApi(t, other.id);
    const res = await theirs.get(other.admin.token, item.id);
    expect(res.statusCode).toBe(404);
    // Another workspace of the same tenant.
    const ws = (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/workspaces`, payload: { name: 'second' }, expect: 201 })).json();
    const switched = (await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: ws.id }, expect: 200 })).json();
    expect((await api.get(switched.token, item.id)).statusCode).toBe(404);
    expect((await api.list(switched.token, '', 200)).json().total).toBe(0);
  });

  it('PUT replaces the editable fields, logs the change, and keeps status; 409 on a closed item', async () => {
    const item = (await api.create(token, manualItem({ milestones: [{ date: '2026-12-01', description: 'first' }] }), 201)).json();
    const updated = (
      await api.put(
        token,
        item.id,
        {
          ...manualItem({ severity: 'CRITICAL', point_of_contact: 'sec-lead' }),
          scheduled_completion: '2027-01-31',
          milestones: [
            { date: '2026-12-01', description: 'first', done: true },
            { date: '2027-01-15', description: 'second' },
          ],
          vendor_dependency: true,
          deviation_request: 'Operational Requirement : legacy app needs it',
        },
        200,
      )
    ).json();
    expect(updated).toMatchObject({
      id: item.id,
      status: 'open',
      severity: 'CRITICAL',
      point_of_contact: 'sec-lead',
      scheduled_completion: '2027-01-31',
      vendor_dependency: true,
      deviation_request: 'Operational Requirement : legacy app needs it',
      milestones: [
        { date: '2026-12-01', description: 'first', done: true },
        { date: '2027-01-15', description: 'second', done: false },
      ],
    });
    expect(updated.comments.at(-1).text).toContain(`scheduled_completion ${item.scheduled_completion} → 2027-01-31`);
    const entry = (await auditOf(t, tenant.id, item.id)).find((e) => e.action === 'poam.updated')!;
    expect(entry.details).toMatchObject({ changes: { severity: { from: 'HIGH', to: 'CRITICAL' } } });
    // Without scheduled_completion it is kept; optional fields omitted become empty.
    const again = (await api.put(token, item.id, manualItem(), 200)).json();
    expect(again).toMatchObject({ scheduled_completion: '2027-01-31', milestones: [], vendor_dependency: false, deviation_request: null });
    expect((await api.put(token, item.id, { ...manualItem(), status: 'closed' })).statusCode).toBe(400);
    expect((await api.put(token, 'POAM-999999', manualItem())).statusCode).toBe(404);
  });

  it('DELETE removes the item (audit log keeps it); its number is never handed out again', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    expect((await api.remove(token, item.id, 200)).json().id).toBe(item.id);
    expect((await api.get(token, item.id)).statusCode).toBe(404);
    expect((await api.remove(token, item.id)).statusCode).toBe(404);
    const deleted = (await auditOf(t, tenant.id, item.id)).find((e) => e.action === 'poam.deleted')!;
    expect(deleted.details).toMatchObject({ item: { id: item.id, weakness_name: item.weakness_name } });
    const next = (await api.create(token, manualItem(), 201)).json();
    expect(Number(next.id.slice(5))).toBe(Number(item.id.slice(5)) + 1);
  });
});

describe('PATCH /poam/{id}/status', () => {
  it('open → in_progress → verification → closed; 409 closing without evidence; every move in the comment log and audit log', async () => {
    const analyst = tenant.users['security-analyst'];
    const item = (await api.create(token, manualItem(), 201)).json();
    const s1 = (await api.status(token, item.id, { status: 'in_progress', comment: 'Started rollout' }, 200)).json();
    expect(s1.status).toBe('in_progress');
    expect(s1.comments.at(-1)).toMatchObject({ author: analyst.username, text: 'Started rollout', status_from: 'open', status_to: 'in_progress' });
    const s2 = (await api.status(token, item.id, { status: 'verification' }, 200)).json();
    expect(s2.comments.at(-1)).toMatchObject({ text: 'Status changed from in_progress to verification', status_from: 'in_progress', status_to: 'verification' });

    const refused = await api.status(token, item.id, { status: 'closed', comment: 'done' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('CONFLICT');
    expect(refused.json().error.message).toContain('without a linked evidence artifact');
    expect((await api.get(token, item.id, 200)).json().status).toBe('verification');

    const uploaded = await api.upload(token, item.id, 'MFA report: all 42 users enrolled', 'mfa-report.txt');
    expect(uploaded.statusCode).toBe(201);
    const closed = (await api.status(token, item.id, { status: 'closed', comment: 'Verified by the report' }, 200)).json();
    expect(closed).toMatchObject({ status: 'closed', evidence_ids: [uploaded.json().id] });
    expect(closed.closed_at).toBe(t.clock.now().toISOString());
    const statusEntries = (await auditOf(t, tenant.id, item.id)).filter((e) => e.action === 'poam.status_changed');
    // One clock instant: compare without order.
    expect(statusEntries.map((e) => [e.details.from, e.details.to, e.actor_name]).sort()).toEqual([
      ['in_progress', 'verification', analyst.username],
      ['open', 'in_progress', analyst.username],
      ['verification', 'closed', analyst.username],
    ]);
  });

  it('400 for an unknown status, the same status, skipped steps and moves out of closed', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    for (const [payload, message] of [
      [{ status: 'done' }, 'status must be one of'],
      [{ status: 'open' }, 'is already open'],
      [{ status: 'verification' }, 'cannot move'],
    ] as const) {
      const res = await api.status(token, item.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message).toContain(message);
    }
    // Closing without evidence is the contract's 409 from any state; with evidence, skipping steps is 400.
    const early = await api.status(token, item.id, { status: 'closed' });
    expect(early.statusCode).toBe(409);
    expect(early.json().error.message).toContain('without a linked evidence artifact');
    await api.upload(token, item.id, 'early proof');
    const skipped = await api.status(token, item.id, { status: 'closed' });
    expect(skipped.statusCode).toBe(400);
    expect(skipped.json().error.message).toContain('cannot move');
    await api.status(token, item.id, { status: 'in_progress' }, 200);
    await api.status(token, item.id, { status: 'verification' }, 200);
    await api.status(token, item.id, { status: 'closed' }, 200);
    for (const status of ['open', 'in_progress', 'verification']) {
      const res = await api.status(token, item.id, { status, comment: 'it came back' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain('closed items are final');
    }
    // A closed item is kept as closed: no edits, no evidence changes.
    expect((await api.put(token, item.id, manualItem())).statusCode).toBe(409);
    expect((await api.upload(token, item.id, 'more')).statusCode).toBe(409);
    expect((await api.status(token, 'POAM-999999', { status: 'in_progress' })).statusCode).toBe(404);
  });

  it('backward moves (verification → in_progress, in_progress → open) need a comment', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    await api.status(token, item.id, { status: 'in_progress' }, 200);
    await api.status(token, item.id, { status: 'verification' }, 200);
    const bare = await api.status(token, item.id, { status: 'in_progress' });
    expect(bare.statusCode).toBe(400);
    expect(bare.json().error.message).toContain('comment is required');
    const back = (await api.status(token, item.id, { status: 'in_progress', comment: 'Scan still shows 3 users without MFA' }, 200)).json();
    expect(back.comments.at(-1)).toMatchObject({ status_from: 'verification', status_to: 'in_progress', text: 'Scan still shows 3 users without MFA' });
    const reset = (await api.status(token, item.id, { status: 'open', comment: 'Owner changed, not started' }, 200)).json();
    expect(reset.status).toBe('open');
  });

  it('403 for read-only', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    expect((await api.status(tenant.users['read-only'].token, item.id, { status: 'in_progress' })).statusCode).toBe(403);
  });
});

describe('comments and evidence', () => {
  it('POST comments appends to the log with the author', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    const res = await api.comment(tenant.admin.token, item.id, 'Budget approved');
    expect(res.statusCode).toBe(201);
    expect(res.json().comments.at(-1)).toMatchObject({ author: tenant.admin.username, text: 'Budget approved', status_from: null, status_to: null });
    expect((await api.comment(token, item.id, '  ')).statusCode).toBe(400);
    expect((await api.comment(token, 'POAM-999999', 'lost')).statusCode).toBe(404);
    expect((await api.comment(tenant.users['read-only'].token, item.id, 'not mine to write')).statusCode).toBe(403);
    expect((await auditOf(t, tenant.id, item.id)).some((e) => e.action === 'poam.commented' && e.actor_name === tenant.admin.username)).toBe(true);
  });

  it('upload records size and SHA-256; list, get, download, delete', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    const content = Buffer.from('%PDF-1.4 scan report\n'.repeat(100));
    const up = await api.upload(token, item.id, content, 'scan report.pdf', { description: 'Nessus rescan', contentType: 'application/pdf' });
    expect(up.statusCode).toBe(201);
    const record = up.json();
    expect(record).toMatchObject({
      poam_id: item.id,
      filename: 'scan report.pdf',
      content_type: 'application/pdf',
      size_bytes: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      description: 'Nessus rescan',
      uploaded_by: tenant.users['security-analyst'].username,
    });
    expect((await api.get(token, item.id, 200)).json().evidence_ids).toEqual([record.id]);
    const list = (await call(t.app, tenant.users['read-only'].token, { url: `${api.base}/${item.id}/evidence`, expect: 200 })).json();
    expect(list.items).toEqual([record]);
    expect((await call(t.app, token, { url: `${api.base}/${item.id}/evidence/${record.id}`, expect: 200 })).json()).toEqual(record);
    const download = await call(t.app, token, { url: `${api.base}/${item.id}/evidence/${record.id}/download`, expect: 200 });
    expect(download.rawPayload.equals(content)).toBe(true);
    expect(download.headers['x-checksum-sha256']).toBe(record.sha256);
    expect(download.headers['content-disposition']).toContain('scan%20report.pdf');
    // Another item's path does not reach it.
    const otherItem = (await api.create(token, manualItem(), 201)).json();
    expect((await call(t.app, token, { url: `${api.base}/${otherItem.id}/evidence/${record.id}` })).statusCode).toBe(404);
    const removed = await call(t.app, token, { method: 'DELETE', url: `${api.base}/${item.id}/evidence/${record.id}` });
    expect(removed.statusCode).toBe(200);
    expect((await api.get(token, item.id, 200)).json().evidence_ids).toEqual([]);
    expect((await call(t.app, token, { url: `${api.base}/${item.id}/evidence/${record.id}/download` })).statusCode).toBe(404);
  });

  it('410 when the file is gone from artifact storage; 404 unknown evidence; 409 removing evidence of a closed item', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    const record = (await api.upload(token, item.id, 'rescan output')).json();
    const { storage_key } = await t.deps.database.db.selectFrom('poam_evidence').select('storage_key').where('id', '=', record.id).executeTakeFirstOrThrow();
    await t.deps.artifacts!.delete(storage_key);
    const missing = await call(t.app, token, { url: `${api.base}/${item.id}/evidence/${record.id}/download` });
    expect(missing.statusCode).toBe(410);
    expect(missing.json().error.message).toBe('the evidence file is missing from artifact storage');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await call(t.app, token, { url: `${api.base}/${item.id}/evidence/${id}` })).statusCode).toBe(404);
    }

    const kept = (await api.upload(token, item.id, 'proof that stays')).json();
    await api.status(token, item.id, { status: 'in_progress' }, 200);
    await api.status(token, item.id, { status: 'verification' }, 200);
    await api.status(token, item.id, { status: 'closed' }, 200);
    const res = await call(t.app, token, { method: 'DELETE', url: `${api.base}/${item.id}/evidence/${kept.id}` });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.message).toContain('is closed: its evidence cannot change');
    expect((await api.get(token, item.id, 200)).json().evidence_ids.sort()).toEqual([record.id, kept.id].sort());
  });

  it('413 above 50 MiB, nothing kept; 400 without a file; 404 unknown item', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    const big = Buffer.alloc(50 * 1024 * 1024 + 1, 0x61);
    const res = await api.upload(token, item.id, big, 'big.bin');
    expect(res.statusCode).toBe(413);
    expect((await api.get(token, item.id, 200)).json().evidence_ids).toEqual([]);
    const empty = await call(t.app, token, {
      method: 'POST',
      url: `${api.base}/${item.id}/evidence`,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      payload: '--x\r\nContent-Disposition: form-data; name="description"\r\n\r\nno file\r\n--x--\r\n',
    });
    expect(empty.statusCode).toBe(400);
    expect((await api.upload(token, 'POAM-999999', 'x')).statusCode).toBe(404);
  });
});

describe('lists, summary and overdue', () => {
  let f: TenantFixture;
  let p: ReturnType<typeof poamApi>;
  let tok: string;
  beforeAll(async () => {
    f = await buildTenant(t);
    p = poamApi(t, f.id);
    tok = f.users['security-analyst'].token;
    // POAM-1 HIGH due in 10 days; POAM-2 LOW in 180; POAM-3 CRITICAL in 2 days (in_progress); POAM-4 MEDIUM closed.
    const day = (n: number) => new Date(t.clock.now().getTime() + n * DAY).toISOString().slice(0, 10);
    await p.create(tok, manualItem({ severity: 'HIGH', scheduled_completion: day(10), point_of_contact: 'Identity-Team' }), 201);
    await p.create(tok, manualItem({ severity: 'LOW', control_ids: ['SC-7'], point_of_contact: 'network' }), 201);
    await p.create(tok, manualItem({ severity: 'CRITICAL', scheduled_completion: day(2), control_ids: ['nist-800-53:SC-7', 'AC-2'], point_of_contact: 'sec-lead' }), 201);
    await p.status(tok, 'POAM-3', { status: 'in_progress' }, 200);
    await p.create(tok, manualItem({ severity: 'MEDIUM', scheduled_completion: day(1), point_of_contact: 'storage' }), 201);
    await p.status(tok, 'POAM-4', { status: 'in_progress' }, 200);
    await p.status(tok, 'POAM-4', { status: 'verification' }, 200);
    await p.upload(tok, 'POAM-4', 'proof');
    await p.status(tok, 'POAM-4', { status: 'closed' }, 200);
  });
  beforeEach(async () => {
    tok = (await fresh(t, f.users['security-analyst'])).token;
  });
  const ids = (res: { json(): { items: Array<{ id: string }> } }) => res.json().items.map((i) => i.id);

  it('GET /poam pages and filters by status, severity, control, point of contact and overdue', async () => {
    const all = (await p.list(tok, '', 200)).json();
    expect(all).toMatchObject({ total: 4, page: 1, per_page: 50, total_pages: 1 });
    expect(ids(await p.list(tok, 'per_page=3&page=2', 200))).toEqual(['POAM-4']);
    expect((await p.list(tok, 'per_page=3', 200)).json()).toMatchObject({ total: 4, total_pages: 2 });
    expect(ids(await p.list(tok, 'status=open', 200))).toEqual(['POAM-1', 'POAM-2']);
    expect(ids(await p.list(tok, 'status=in_progress,closed', 200))).toEqual(['POAM-3', 'POAM-4']);
    expect(ids(await p.list(tok, 'severity=critical,HIGH', 200))).toEqual(['POAM-1', 'POAM-3']);
    expect(ids(await p.list(tok, 'control_id=sc-7', 200))).toEqual(['POAM-2', 'POAM-3']);
    expect(ids(await p.list(tok, 'point_of_contact=identity-team', 200))).toEqual(['POAM-1']);
    expect(ids(await p.list(tok, 'sort=-severity', 200))).toEqual(['POAM-3', 'POAM-1', 'POAM-4', 'POAM-2']);
    expect(ids(await p.list(tok, 'overdue=true', 200))).toEqual([]);
    for (const bad of ['status=done', 'severity=INFO', 'sort=weird', 'control_id=hello', 'per_page=501', 'page=0', 'bogus=1']) {
      expect((await p.list(tok, bad)).statusCode, bad).toBe(400);
    }
  });

  it('GET /poam/summary of a tenant without items: zeros everywhere', async () => {
    const empty = await buildTenant(t);
    const summary = (await call(t.app, empty.admin.token, { url: `/api/v1/tenants/${empty.id}/poam/summary`, expect: 200 })).json();
    expect(summary).toMatchObject({
      total: 0,
      overdue: 0,
      by_status: { open: 0, in_progress: 0, verification: 0, closed: 0 },
      by_severity: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0 },
    });
  });

  it('GET /poam/summary counts by status and severity', async () => {
    const summary = (await call(t.app, f.users['read-only'].token, { url: `${p.base}/summary`, expect: 200 })).json();
    expect(summary).toEqual({
      total: 4,
      overdue: 0,
      by_status: { open: 2, in_progress: 1, verification: 0, closed: 1 },
      by_severity: { CRITICAL: 1, HIGH: 1, MEDIUM: 1, LOW: 1 },
      open_by_severity: { CRITICAL: 1, HIGH: 1, MEDIUM: 0, LOW: 1 },
      by_status_and_severity: {
        open: { CRITICAL: 0, HIGH: 1, MEDIUM: 0, LOW: 1 },
        in_progress: { CRITICAL: 1, HIGH: 0, MEDIUM: 0, LOW: 0 },
        verification: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0 },
        closed: { CRITICAL: 0, HIGH: 0, MEDIUM: 1, LOW: 0 },
      },
      as_of: t.clock.now().toISOString().slice(0, 10),
    });
  });

  it('overdue: scheduled completion passed and not closed, the most overdue first', async () => {
    t.clock.advance(11 * DAY);
    try {
      tok = (await fresh(t, f.users['security-analyst'])).token;
      const overdue = (await call(t.app, tok, { url: `${p.base}/overdue`, expect: 200 })).json();
      // POAM-4 is past its date too, but closed.
      expect(overdue.items.map((i: { id: string }) => i.id)).toEqual(['POAM-3', 'POAM-1']);
      expect(overdue.items.every((i: { overdue: boolean }) => i.overdue)).toBe(true);
      expect(overdue.total).toBe(2);
      expect(ids(await p.list(tok, 'overdue=true', 200))).toEqual(['POAM-1', 'POAM-3']);
      expect(ids(await p.list(tok, 'overdue=false', 200))).toEqual(['POAM-2', 'POAM-4']);
      expect((await call(t.app, tok, { url: `${p.base}/overdue?severity=HIGH`, expect: 200 })).json().total).toBe(1);
      expect((await call(t.app, tok, { url: `${p.base}/summary`, expect: 200 })).json().overdue).toBe(2);
      expect((await p.get(tok, 'POAM-2', 200)).json().overdue).toBe(false);
    } finally {
      t.clock.advance(-11 * DAY);
    }
  });
});
