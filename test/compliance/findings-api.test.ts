import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';

let t: TestApp;
let tenant: TenantFixture;
let token: string;
let all: Array<Record<string, any>>;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  await putNodes(
    t,
    token,
    tenant.id,
    builtinRules().map((r) => fixtureNode(r.id, 'violating', `${r.id}-bad`)),
  );
  await audit(t, token, tenant.id);
  all = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings?status=all&per_page=500`, expect: 200 })).json().items;
});
afterAll(() => t.close());

const list = (query: string) => call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings${query}` });
const ids = (res: { json(): any }) => res.json().items.map((f: { id: string }) => f.id);

describe('GET /findings parameters', () => {
  it('defaults: status open, per_page 50, sorted by -severity, the paged envelope', async () => {
    const res = await list('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ page: 1, per_page: 50, total: all.length, total_pages: Math.ceil(all.length / 50) });
    expect(body.items).toHaveLength(Math.min(50, all.length));
    const ranks = body.items.map((f: { severity: string }) => ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'].indexOf(f.severity));
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    expect(body.items.every((f: { status: string }) => f.status === 'open')).toBe(true);
  });

  it('per_page up to 500; above 500 is 400', async () => {
    expect((await list('?per_page=500')).statusCode).toBe(200);
    const res = await list('?per_page=501');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
  });

  it('severity takes a comma-separated list; an unknown value is 400', async () => {
    const res = await list('?severity=CRITICAL,HIGH&per_page=500');
    const expected = all
      .filter((f) => f.severity === 'CRITICAL' || f.severity === 'HIGH')
      .map((f) => f.id)
      .sort();
    expect([...ids(res)].sort()).toEqual(expected);
    expect((await list('?severity=CRITICAL,URGENT')).statusCode).toBe(400);
  });

  it('framework matches the finding framework or a mapped one; control_id likewise', async () => {
    const res = await list('?framework=soc2&per_page=500');
    const expected = all.filter((f) => f.framework === 'soc2' || f.framework_mappings.some((m: { framework: string }) => m.framework === 'soc2'));
    expect(res.json().total).toBe(expected.length);
    const control = await list('?framework=cis-aws&control_id=6.3&per_page=500');
    expect(control.json().items.length).toBeGreaterThan(0);
    for (const f of control.json().items) {
      expect(f.control_id === '6.3' || f.framework_mappings.some((m: { control_id: string }) => m.control_id === '6.3')).toBe(true);
    }
  });

  it('resource_type and search (title, description, resource id)', async () => {
    const buckets = await list('?resource_type=aws.s3.bucket&per_page=500');
    expect(buckets.json().items.every((f: { resource_type: string }) => f.resource_type === 'aws.s3.bucket')).toBe(true);
    expect(buckets.json().total).toBe(all.filter((f) => f.resource_type === 'aws.s3.bucket').length);
    const byId = await list(`?search=${encodeURIComponent('aws-kms-key-rotation-enabled-bad')}`);
    expect(ids(byId).length).toBeGreaterThan(0);
    expect(ids(byId).every((id: string) => id.includes('aws-kms-key-rotation-enabled-bad'))).toBe(true);
    // Case-insensitive substring of the title, the description or the resource id: exactly the findings that have it.
    const matching = (term: string) =>
      all
        .filter((f) => [f.title, f.description, f.resource_id].some((v) => v.toLowerCase().includes(term.toLowerCase())))
        .map((f) => f.id)
        .sort();
    const inTitles = 'multi-AZ';
    // A word of some description that no title or resource id holds.
    const inDescriptions = all
      .flatMap((f) => f.description.split(/[^A-Za-z-]+/))
      .find((w) => w.length >= 8 && !all.some((f) => f.title.toLowerCase().includes(w.toLowerCase()) || f.resource_id.toLowerCase().includes(w.toLowerCase())))!;
    expect(inDescriptions).toBeDefined();
    for (const term of [inTitles, inDescriptions]) {
      const found = (await list(`?search=${encodeURIComponent(term)}&per_page=500`)).json();
      expect(matching(term).length, term).toBeGreaterThan(0);
      expect(found.items.map((f: { id: string }) => f.id).sort(), term).toEqual(matching(term));
      expect(found.total, term).toBe(matching(term).length);
    }
  });

  it('sort by created_at, resource_id, with - for descending; an unknown sort is 400', async () => {
    const asc = ids(await list('?sort=resource_id&per_page=500'));
    const expected = [...all].sort((a, b) => (a.resource_id < b.resource_id ? -1 : a.resource_id > b.resource_id ? 1 : a.id < b.id ? -1 : 1)).map((f) => f.id);
    expect(asc).toEqual(expected);
    const desc = (await list('?sort=-resource_id&per_page=500')).json().items.map((f: { resource_id: string }) => f.resource_id);
    expect(desc).toEqual([...desc].sort().reverse());
    expect((await list('?sort=-created_at')).statusCode).toBe(200);
    expect((await list('?sort=title')).statusCode).toBe(400);
  });

  it('sort=severity is ascending: the buckets of -severity in reverse, each in the same order (created_at desc, then id)', async () => {
    const rank = (f: { severity: string }) => ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'].indexOf(f.severity);
    const asc = (await list('?sort=severity&per_page=500')).json().items as Array<{ id: string; severity: string }>;
    const desc = (await list('?sort=-severity&per_page=500')).json().items as Array<{ id: string; severity: string }>;
    expect(asc).toHaveLength(all.length);
    const ranks = asc.map(rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(ranks[0]).toBeLessThan(ranks.at(-1)!);
    const buckets = [0, 1, 2, 3, 4].flatMap((r) => desc.filter((f) => rank(f) === r).map((f) => f.id));
    expect(asc.map((f) => f.id)).toEqual(buckets);
  });

  it('page 2 is the next slice of the same order, with the paged envelope; past the last page is empty', async () => {
    const order = ids(await list('?sort=resource_id&per_page=500'));
    expect(order.length).toBeGreaterThan(20);
    const totalPages = Math.ceil(all.length / 10);
    const second = await list('?sort=resource_id&per_page=10&page=2');
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ page: 2, per_page: 10, total: all.length, total_pages: totalPages });
    expect(ids(second)).toEqual(order.slice(10, 20));
    expect(ids(await list('?sort=resource_id&per_page=10&page=1'))).toEqual(order.slice(0, 10));
    const last = await list(`?sort=resource_id&per_page=10&page=${totalPages}`);
    expect(ids(last)).toEqual(order.slice((totalPages - 1) * 10));
    const past = await list(`?sort=resource_id&per_page=10&page=${totalPages + 1}`);
    expect(past.json()).toMatchObject({ items: [], page: totalPages + 1, per_page: 10, total: all.length, total_pages: totalPages });
    expect((await list('?page=0')).statusCode).toBe(400);
  });

  it('?id= returns one finding of any status with framework_mappings', async () => {
    const target = all.find((f) => f.framework_mappings.length > 0)!;
    const res = await list(`?id=${encodeURIComponent(target.id)}`);
    expect(res.json().items).toHaveLength(1);
    expect(res.json().items[0].framework_mappings).toEqual(target.framework_mappings);
  });

  it('status resolved and all', async () => {
    const target = all[0]!;
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(target.id)}/resolve`, payload: {}, expect: 200 });
    expect(ids(await list('?status=resolved'))).toEqual([target.id]);
    expect(ids(await list('?per_page=500'))).not.toContain(target.id);
    expect((await list('?status=all&per_page=500')).json().total).toBe(all.length);
    expect((await list('?status=bogus')).statusCode).toBe(400);
  });
});

describe('single findings', () => {
  it('GET /findings/{id}: the finding; 404 unknown or another tenant', async () => {
    const target = all[1]!;
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(target.id)}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(target.id);
    expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/nope:nope` })).statusCode).toBe(404);
    const other = await buildTenant(t);
    expect((await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/findings/${encodeURIComponent(target.id)}` })).statusCode).toBe(404);
  });

  it('POST /resolve needs findings:write, emits finding.resolved and is audit-logged; again is 409', async () => {
    const target = all[2]!;
    const url = `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(target.id)}/resolve`;
    expect((await call(t.app, tenant.users.auditor.token, { method: 'POST', url, payload: {} })).statusCode).toBe(403);
    t.clock.advance(1000);
    const res = await call(t.app, token, { method: 'POST', url, payload: { comment: 'fixed by hand' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'resolved', resolved_by: `user:${tenant.users['security-analyst'].user_id}` });
    expect((await call(t.app, token, { method: 'POST', url, payload: {} })).statusCode).toBe(409);
    const event = (await events(t, tenant.id, 'finding.resolved')).find((e) => (e.data as { finding_id: string }).finding_id === target.id);
    expect(event?.data).toMatchObject({ finding_id: target.id, resolved_by: 'user' });
    const log = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=finding.resolved`, expect: 200 });
    expect(log.json().items[0]).toMatchObject({ target_id: target.id, details: { comment: 'fixed by hand' } });
    // The next audit sees the violation still there and reopens it.
    await audit(t, token, tenant.id);
    expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(target.id)}` })).json().status).toBe('open');
  });

  it('remediation fills the resource into the commands', async () => {
    const node = fixtureNode('aws-s3-bucket-versioning', 'violating', 'aws-s3-bucket-versioning-bad');
    const id = `aws-s3-bucket-versioning:${nodeIdOf(node)}`;
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/remediation`, expect: 200 });
    const body = res.json();
    expect(body).toMatchObject({ finding_id: id, summary: expect.any(String), terraform_patch_available: true });
    expect(body.steps[0]).toMatchObject({ order: 1, action: expect.any(String) });
    // <bucket-name> is the bucket's name; options the operator chooses stay as placeholders.
    const commands = body.steps.map((s: { command: string }) => s.command).join('\n');
    expect(commands).toContain(`--bucket ${node.name}`);
    expect(commands).not.toContain('<bucket-name>');
  });
});
