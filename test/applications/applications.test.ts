import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { awsNode, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { activeBySeverity, client, expectedHealth, shaped, type Client } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Client;

// web-1: HIGH (IMDSv2) and no critical rule for instances; orders-db: CRITICAL (public RDS instance).
const web = shaped(fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-web-1'), {
  tags: { app: 'checkout', project: 'retail', env: 'prod' },
  configuration: { vpcId: 'vpc-shop' },
});
const ordersDb = shaped(fixtureNode('aws-rds-instance-not-publicly-accessible', 'violating', 'db-orders'), {
  tags: { Application: 'payments', project: 'retail' },
  configuration: { dBSubnetGroup: { vpcId: 'vpc-shop' } },
});
// Classic load balancers have only MEDIUM rules: medium findings and nothing above.
const lb = shaped(fixtureNode('aws-elb-classic-encrypted-listeners', 'violating', 'lb-reports'), { tags: { app: 'reporting' } });
const thing = { ...awsNode('aws.custom.thing', 'thing-1'), tags: { app: 'checkout' } };
const ids = { web: nodeIdOf(web), db: nodeIdOf(ordersDb), lb: nodeIdOf(lb), thing: nodeIdOf(thing) };

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const token = tenant.users['security-analyst'].token;
  api = client(t, tenant.id, token);
  await putNodes(t, token, tenant.id, [web, ordersDb, lb, thing]);
  await audit(t, token, tenant.id);
  // The other tenant has an application tag of the same value: it must never leak in.
  await putNodes(t, other.admin.token, other.id, [{ ...awsNode('aws.custom.thing', 'elsewhere'), tags: { app: 'checkout' } }]);
});
afterAll(() => t.close());

async function appByName(name: string, derived: boolean) {
  const list = await api.get(`/applications?per_page=500&derived=${derived}`);
  return (list.items as Array<{ id: string; name: string }>).find((a) => a.name === name)!;
}

describe('derived applications', () => {
  it('are discovered from the tag keys application, app, project, service, workload (any case), one per value', async () => {
    const list = await api.get('/applications?per_page=500');
    const names = list.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(['checkout', 'payments', 'reporting', 'retail']);
    expect(list.total).toBe(4);
    const payments = list.items.find((a: { name: string }) => a.name === 'payments');
    expect(payments).toMatchObject({
      derived: true,
      derived_from: { tag_value: 'payments', tag_keys: ['Application'] },
      filter: 'tags.Application = "payments"',
      resource_count: 1,
    });
    const checkout = list.items.find((a: { name: string }) => a.name === 'checkout');
    expect(checkout.resource_count).toBe(2);
    expect(checkout.created_by).toBe('system:discovery');
    const retail = list.items.find((a: { name: string }) => a.name === 'retail');
    expect(retail.resource_count).toBe(2);
  });

  it('keep their id across listings, widen their filter when a new key spelling appears, and go when the tag goes', async () => {
    const before = await appByName('reporting', true);
    const token = tenant.users['security-analyst'].token;
    await putNodes(t, token, tenant.id, [{ ...awsNode('aws.custom.thing', 'report-job'), tags: { Workload: 'reporting' } }]);
    const after = await api.get(`/applications/${before.id}`);
    expect(after.id).toBe(before.id);
    // The filter follows on the next discovery (list call).
    await api.get('/applications');
    const widened = await api.get(`/applications/${before.id}`);
    expect(widened.derived_from.tag_keys).toEqual(['Workload', 'app']);
    expect(widened.filter).toBe('tags.Workload = "reporting" OR tags.app = "reporting"');
    expect(widened.resource_count).toBe(2);
    // Untagging the last resources removes the derived application.
    await putNodes(t, token, tenant.id, [{ ...awsNode('aws.custom.thing', 'report-job'), tags: {} }, shaped(lb, { tags: {} })]);
    await api.get('/applications');
    await api.get(`/applications/${before.id}`, 404);
    await putNodes(t, token, tenant.id, [lb]);
    expect((await appByName('reporting', true)).id).not.toBe(before.id);
  });

  it('are read-only: PUT and DELETE answer 409', async () => {
    const payments = await appByName('payments', true);
    const res = await api.put(`/applications/${payments.id}`, { name: 'x', filter: 'name = x' }, 409);
    expect(res.error.message).toMatch(/derived from resource tags/);
    await api.del(`/applications/${payments.id}`, 409);
  });

  it('stay inside the tenant', async () => {
    const mine = await appByName('checkout', true);
    const theirs = client(t, other.id, other.admin.token);
    const list = await theirs.get('/applications');
    expect(list.items.map((a: { name: string }) => a.name)).toEqual(['checkout']);
    expect(list.items[0].resource_count).toBe(1);
    await theirs.get(`/applications/${mine.id}`, 404);
  });
});

describe('health roll-up', () => {
  it('counts the active findings of the member resources by severity, and applies the spec rule', async () => {
    for (const [name, members] of [
      ['checkout', [ids.web, ids.thing]],
      ['payments', [ids.db]],
      ['reporting', [ids.lb]],
      ['retail', [ids.web, ids.db]],
    ] as const) {
      const app = await appByName(name, true);
      const detail = await api.get(`/applications/${app.id}`);
      const expected = await activeBySeverity(api, [...members]);
      expect(detail.findings_by_severity, name).toEqual(expected);
      expect(detail.health, name).toBe(expectedHealth(expected));
    }
  });

  it('Critical with any critical finding, Warning with high and no critical, Healthy otherwise (medium only)', async () => {
    expect((await api.get(`/applications/${(await appByName('payments', true)).id}`)).health).toBe('Critical');
    const checkout = await api.get(`/applications/${(await appByName('checkout', true)).id}`);
    expect(checkout.findings_by_severity.CRITICAL).toBe(0);
    expect(checkout.findings_by_severity.HIGH).toBeGreaterThan(0);
    expect(checkout.health).toBe('Warning');
    const reporting = await api.get(`/applications/${(await appByName('reporting', true)).id}`);
    expect(reporting.findings_by_severity).toMatchObject({ CRITICAL: 0, HIGH: 0 });
    expect(reporting.findings_by_severity.MEDIUM).toBeGreaterThan(0);
    expect(reporting.health).toBe('Healthy');
    // retail holds both: the critical wins.
    expect((await api.get(`/applications/${(await appByName('retail', true)).id}`)).health).toBe('Critical');
  });

  it('lists member resources worst first, each with its own counts and health', async () => {
    const retail = await api.get(`/applications/${(await appByName('retail', true)).id}?per_page=1`);
    expect(retail.resources).toMatchObject({ total: 2, page: 1, per_page: 1, total_pages: 2 });
    expect(retail.resources.items[0]).toMatchObject({ id: ids.db, health: 'Critical', type: 'aws.rds.db_instance' });
    const second = await api.get(`/applications/${(await appByName('retail', true)).id}?per_page=1&page=2`);
    expect(second.resources.items[0]).toMatchObject({ id: ids.web, health: 'Warning' });
  });

  it('follows risk acceptance: an accepted critical finding no longer counts', async () => {
    const critical = (await api.get(`/findings?resource_id=${encodeURIComponent(ids.db)}&severity=CRITICAL`)).items as Array<{ id: string }>;
    expect(critical.length).toBeGreaterThan(0);
    const payments = await appByName('payments', true);
    const before = await api.get(`/applications/${payments.id}`);
    for (const f of critical) {
      await api.post(`/findings/${encodeURIComponent(f.id)}/accept`, { reason: 'compensating control', owner: 'db-team', expires_at: '2027-01-31T00:00:00Z' }, 201);
    }
    const after = await api.get(`/applications/${payments.id}`);
    expect(after.findings_by_severity.CRITICAL).toBe(before.findings_by_severity.CRITICAL - critical.length);
    expect(after.findings_by_severity).toEqual(await activeBySeverity(api, [ids.db]));
    expect(after.health).toBe(expectedHealth(after.findings_by_severity));
    expect(after.health).not.toBe('Critical');
    for (const f of critical)
      await call(t.app, tenant.users['security-analyst'].token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(f.id)}/accept`, expect: 200 });
    expect((await api.get(`/applications/${payments.id}`)).health).toBe('Critical');
  });
});

describe('defined applications', () => {
  it('are created from a filter, with their members and roll-up', async () => {
    const created = await api.post(
      '/applications',
      { name: 'Shop VPC databases', description: 'RDS in the shop VPC', filter: 'vpc_id = vpc-shop AND type = aws.rds.db_instance' },
      201,
    );
    expect(created).toMatchObject({ name: 'Shop VPC databases', derived: false, derived_from: null, resource_count: 1, health: 'Critical', services: [] });
    const detail = await api.get(`/applications/${created.id}`);
    expect(detail.resources.items.map((r: { id: string }) => r.id)).toEqual([ids.db]);
    const audit = await t.deps.database.db.selectFrom('audit_logs').selectAll().where('target_id', '=', created.id).execute();
    expect(audit.map((a) => a.action)).toEqual(['application.created']);
  });

  it('refuse a filter that does not parse with 400 and the position', async () => {
    const res = await api.post('/applications', { name: 'broken', filter: 'tags.app = checkout AND (type = x' }, 400);
    expect(res.error.code).toBe('BAD_REQUEST');
    expect(res.error.message).toBe('invalid filter: unexpected end of the filter: expected ")" closing the "(" at position 24 (at position 33)');
    expect(res.error.details).toEqual({ field: 'filter', position: 33, near: 'eckout AND (type = x' });
    const unknown = await api.post('/applications', { name: 'broken', filter: 'colour = red' }, 400);
    expect(unknown.error.details.position).toBe(0);
    expect(unknown.error.message).toMatch(/unknown attribute "colour"/);
  });

  it('answer 409 for a taken name (case-insensitive), 400 for an empty name or unknown field', async () => {
    await api.post('/applications', { name: 'shop vpc DATABASES', filter: 'name = x' }, 409);
    await api.post('/applications', { name: '', filter: 'name = x' }, 400);
    await api.post('/applications', { name: 'x', filter: 'name = x', owner: 'me' }, 400);
  });

  it('can be replaced and deleted; the change is audit-logged', async () => {
    const created = await api.post('/applications', { name: 'temp', filter: 'name contains web' }, 201);
    expect(created.resource_count).toBe(1);
    const updated = await api.put(`/applications/${created.id}`, { name: 'temp2', filter: 'tags.env = prod OR type = aws.rds.db_instance' }, 200);
    expect(updated).toMatchObject({ name: 'temp2', resource_count: 2, description: '' });
    await api.put(`/applications/${created.id}`, { name: 'temp2', filter: 'tags.env =' }, 400);
    await api.del(`/applications/${created.id}`);
    await api.get(`/applications/${created.id}`, 404);
    const audit = await t.deps.database.db.selectFrom('audit_logs').select('action').where('target_id', '=', created.id).orderBy('created_at').execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['application.created', 'application.deleted', 'application.updated']);
  });

  it('need applications:write; read-only users can read', async () => {
    const readOnly = client(t, tenant.id, tenant.users['read-only'].token);
    const res = await readOnly.post('/applications', { name: 'nope', filter: 'name = x' }, 403);
    expect(res.error.message).toBe('missing permission applications:write');
    expect((await readOnly.get('/applications')).total).toBeGreaterThan(0);
  });

  it('list filters: derived, search, paging', async () => {
    const defined = await api.get('/applications?derived=false');
    expect(defined.items.map((a: { name: string }) => a.name)).toEqual(['Shop VPC databases']);
    const search = await api.get('/applications?search=PAY');
    expect(search.items.map((a: { name: string }) => a.name)).toEqual(['payments']);
    const paged = await api.get('/applications?per_page=2&page=2');
    expect(paged).toMatchObject({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    expect(paged.items).toHaveLength(2);
    await api.get('/applications/not-a-uuid', 400);
  });
});
