import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { awsNode, putEdges, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { pageRequest } from '../../src/platform/http/pagination.js';
import { createScoredFindings } from '../../src/modules/compliance/findings/scored.js';
import { serviceCriticality } from '../../src/modules/applications/index.js';
import { activeBySeverity, client, expectedHealth, shaped, type Client } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Client;
let token: string;

const web = shaped(fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-web'), {
  tags: { app: 'checkout', product: 'storefront', criticality: 'high', team: 'shop-team' },
  configuration: { vpcId: 'vpc-shop' },
});
const db = shaped(fixtureNode('aws-rds-instance-not-publicly-accessible', 'violating', 'db-orders'), {
  tags: { app: 'payments', product: 'storefront', team: 'shop-team' },
  configuration: { dBSubnetGroup: { vpcId: 'vpc-shop' } },
});
const lb = shaped(fixtureNode('aws-elb-classic-encrypted-listeners', 'violating', 'lb-reports'), { tags: { app: 'reporting' } });
const inVpc = (nativeId: string, app: string) => ({ ...awsNode('aws.custom.thing', nativeId, { properties: { configuration: { vpcId: 'vpc-data' } } }), tags: { app } });
const search = inVpc('search-1', 'search');
const indexer = inVpc('indexer-1', 'indexer');
const dataVpc = awsNode('aws.ec2.vpc', 'vpc-data', { name: 'data-vpc' });
const alpha = { ...awsNode('aws.custom.thing', 'a1'), tags: { app: 'alpha' } };
const beta = { ...awsNode('aws.custom.thing', 'b1'), tags: { app: 'beta' } };
const solo = { ...awsNode('aws.custom.thing', 's1'), tags: { app: 'solo' } };
const ids = { web: nodeIdOf(web), db: nodeIdOf(db), lb: nodeIdOf(lb) };
const apps: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  api = client(t, tenant.id, token);
  await putNodes(t, token, tenant.id, [web, db, lb, search, indexer, dataVpc, alpha, beta, solo]);
  await putEdges(t, token, tenant.id, [{ source: nodeIdOf(alpha), target: nodeIdOf(beta), type: 'connects_to' }]);
  await audit(t, token, tenant.id);
  for (const app of (await api.get('/applications?per_page=500')).items as Array<{ id: string; name: string }>) apps[app.name] = app.id;
});
afterAll(() => t.close());

describe('POST /applications/suggest-services', () => {
  it('groups by a shared tag, then a shared VPC, then graph connectivity, and explains each', async () => {
    const res = await api.post('/applications/suggest-services', {});
    expect(res.applications_considered).toBe(8);
    const byReason = Object.fromEntries(res.items.map((s: { reason: string }) => [s.reason, s]));
    expect(res.total).toBe(3);
    expect(byReason.shared_tag).toMatchObject({
      name: 'storefront',
      evidence: { tag_key: 'product', tag_value: 'storefront' },
      applications: [
        { id: apps.checkout, name: 'checkout', derived: true, resource_count: 1 },
        { id: apps.payments, name: 'payments', derived: true, resource_count: 1 },
      ],
      service: { name: 'storefront', criticality: 'high', owner: 'shop-team', sla_tier: null, application_ids: [apps.checkout, apps.payments] },
    });
    expect(byReason.shared_tag.explanation).toMatch(/product = "storefront": checkout and payments/);
    expect(byReason.shared_vpc).toMatchObject({ name: 'data-vpc (vpc-data)', evidence: { vpc_id: 'vpc-data' }, service: { criticality: 'medium', owner: null } });
    expect(byReason.shared_vpc.applications.map((a: { name: string }) => a.name)).toEqual(['indexer', 'search']);
    expect(byReason.connected).toMatchObject({ name: 'alpha + beta', evidence: { edges: 1 } });
    expect(res.unassigned_applications.map((a: { name: string }) => a.name)).toEqual(['reporting', 'solo']);
  });

  it('proposes bodies that POST /services accepts, and leaves assigned applications out afterwards', async () => {
    const res = await api.post('/applications/suggest-services', {});
    const vpc = res.items.find((s: { reason: string }) => s.reason === 'shared_vpc');
    const created = await api.post('/services', vpc.service, 201);
    expect(created.applications.map((a: { name: string }) => a.name)).toEqual(['indexer', 'search']);
    const again = await api.post('/applications/suggest-services', {});
    expect(again.items.map((s: { reason: string }) => s.reason).sort()).toEqual(['connected', 'shared_tag']);
    expect(again.applications_considered).toBe(6);
    const all = await api.post('/applications/suggest-services', { include_assigned: true });
    expect(all.items.map((s: { reason: string }) => s.reason).sort()).toEqual(['connected', 'shared_tag', 'shared_vpc']);
    const none = await api.post('/applications/suggest-services', { min_applications: 3 });
    expect(none.total).toBe(0);
    // The body is optional; a bad one is 400.
    const bare = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/applications/suggest-services`, expect: 200 });
    expect(bare.json().total).toBe(2);
    await api.post('/applications/suggest-services', { min_applications: 1 }, 400);
    await api.post('/applications/suggest-services', { group_by: 'vpc' }, 400);
    await api.del(`/services/${created.id}`);
  });
});

describe('business services', () => {
  let serviceId: string;

  it('are created with criticality, SLA tier, owner and member applications; findings roll up to the service', async () => {
    const created = await api.post(
      '/services',
      {
        name: 'Online shop',
        description: 'Storefront and payments',
        criticality: 'critical',
        sla_tier: 'tier-1',
        owner: 'shop-team',
        application_ids: [apps.checkout, apps.payments],
      },
      201,
    );
    serviceId = created.id;
    expect(created).toMatchObject({ name: 'Online shop', criticality: 'critical', sla_tier: 'tier-1', owner: 'shop-team', application_count: 2, resource_count: 2 });
    const expected = await activeBySeverity(api, [ids.web, ids.db]);
    expect(created.findings_by_severity).toEqual(expected);
    expect(created.health).toBe('Critical');
    const checkout = created.applications.find((a: { id: string }) => a.id === apps.checkout);
    expect(checkout).toMatchObject({ name: 'checkout', resource_count: 1, health: 'Warning', findings_by_severity: await activeBySeverity(api, [ids.web]) });
    expect(created.applications.find((a: { id: string }) => a.id === apps.payments).health).toBe('Critical');
    // The applications show the service too.
    expect((await api.get(`/applications/${apps.checkout}`)).services).toEqual([{ id: serviceId, name: 'Online shop', criticality: 'critical' }]);
  });

  it('count a resource once when two member applications hold it', async () => {
    const overlap = await api.post('/applications', { name: 'shop VPC', filter: 'vpc_id = vpc-shop' }, 201);
    expect(overlap.resource_count).toBe(2);
    const detail = await api.post(`/services/${serviceId}/applications`, { application_ids: [overlap.id, apps.checkout] });
    expect(detail.application_count).toBe(3);
    expect(detail.resource_count).toBe(2);
    expect(detail.findings_by_severity).toEqual(await activeBySeverity(api, [ids.web, ids.db]));
    await api.del(`/services/${serviceId}/applications/${overlap.id}`, 200);
  });

  it('change with their membership: adding and removing applications moves the roll-up', async () => {
    const added = await api.post(`/services/${serviceId}/applications`, { application_ids: [apps.reporting] });
    expect(added.resource_count).toBe(3);
    expect(added.findings_by_severity).toEqual(await activeBySeverity(api, [ids.web, ids.db, ids.lb]));
    const removed = await api.del(`/services/${serviceId}/applications/${apps.payments}`, 200);
    expect(removed.applications.map((a: { name: string }) => a.name)).toEqual(['checkout', 'reporting']);
    expect(removed.findings_by_severity).toEqual(await activeBySeverity(api, [ids.web, ids.lb]));
    expect(removed.health).toBe('Warning');
    const again = await api.del(`/services/${serviceId}/applications/${apps.payments}`, 404);
    expect(again.error.message).toMatch(/not a member/);
    const audit = await t.deps.database.db.selectFrom('audit_logs').select('action').where('target_id', '=', serviceId).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['business_service.created', 'business_service.applications_added', 'business_service.application_removed']));
  });

  it('refuse unknown applications (also those of another tenant) with 400 naming them', async () => {
    const foreign = (await client(t, other.id, other.admin.token).post('/applications', { name: 'theirs', filter: 'name = x' }, 201)).id;
    const missing = randomUUID();
    const res = await api.post(`/services/${serviceId}/applications`, { application_ids: [missing, foreign] }, 400);
    expect(res.error.details.unknown_application_ids).toEqual([missing, foreign]);
    await api.post('/services', { name: 'bad', criticality: 'low', application_ids: [missing] }, 400);
    expect((await api.get('/services?search=bad')).total).toBe(0);
  });

  it('are replaced by PUT (members too when application_ids is given)', async () => {
    const updated = await api.put(`/services/${serviceId}`, { name: 'Online shop', criticality: 'high', sla_tier: null, owner: 'platform', description: 'new' });
    expect(updated).toMatchObject({ criticality: 'high', sla_tier: null, owner: 'platform', description: 'new', application_count: 2 });
    const replaced = await api.put(`/services/${serviceId}`, { name: 'Online shop', criticality: 'critical', application_ids: [apps.payments] });
    expect(replaced.applications.map((a: { name: string }) => a.name)).toEqual(['payments']);
    expect(replaced).toMatchObject({ owner: null, health: 'Critical', resource_count: 1 });
  });

  it('validate their body and names', async () => {
    await api.post('/services', { name: 'x', criticality: 'urgent' }, 400);
    await api.post('/services', { criticality: 'low' }, 400);
    await api.post('/services', { name: 'ONLINE SHOP', criticality: 'low' }, 409);
    await api.put(`/services/${randomUUID()}`, { name: 'x', criticality: 'low' }, 404);
    await client(t, other.id, other.admin.token).get(`/services/${serviceId}`, 404);
  });

  it('list with filters and paging', async () => {
    await api.post('/services', { name: 'Back office', criticality: 'low', application_ids: [apps.reporting] }, 201);
    const list = await api.get('/services');
    expect(list.items.map((s: { name: string }) => s.name)).toEqual(['Back office', 'Online shop']);
    expect(list.items[1]).toMatchObject({ application_count: 1, health: 'Critical' });
    expect(list.items[0]).toMatchObject({ health: expectedHealth(await activeBySeverity(api, [ids.lb])) });
    expect((await api.get('/services?criticality=low')).items.map((s: { name: string }) => s.name)).toEqual(['Back office']);
    expect(await api.get('/services?per_page=1&page=2')).toMatchObject({ total: 2, total_pages: 2, page: 2 });
  });

  it('give resources their business criticality for the risk score (the highest service wins)', async () => {
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    const criticality = serviceCriticality(t.deps);
    await api.post('/services', { name: 'Reports', criticality: 'medium', application_ids: [apps.reporting, apps.payments] }, 201);
    const map = await criticality(scope, [ids.web, ids.db, ids.lb, 'aws:us-east-1:aws.custom.thing:nope']);
    expect(Object.fromEntries(map)).toEqual({ [ids.db]: 'critical', [ids.lb]: 'medium' });
    const scored = createScoredFindings(t.deps);
    const page = await scored(scope, { status: 'open', resourceId: ids.db }, pageRequest({ per_page: 50 }));
    expect(page.items.length).toBeGreaterThan(0);
    for (const item of page.items) expect(item.risk_factors.criticality).toBe(10);
  });

  it('keep a derived application whose tag disappeared while a service lists it (with no members)', async () => {
    await putNodes(t, token, tenant.id, [shaped(lb, { tags: {} })]);
    await api.get('/applications');
    const reporting = await api.get(`/applications/${apps.reporting}`);
    expect(reporting.resource_count).toBe(0);
    expect(reporting.health).toBe('Healthy');
    await putNodes(t, token, tenant.id, [lb]);
  });

  it('are deleted with DELETE (applications stay); deleting an application removes it from services', async () => {
    const temp = await api.post('/applications', { name: 'temp app', filter: 'name = nothing' }, 201);
    const svc = await api.post('/services', { name: 'Temp', criticality: 'low', application_ids: [temp.id, apps.solo] }, 201);
    await api.del(`/applications/${temp.id}`);
    expect((await api.get(`/services/${svc.id}`)).applications.map((a: { name: string }) => a.name)).toEqual(['solo']);
    await api.del(`/services/${svc.id}`);
    await api.get(`/services/${svc.id}`, 404);
    await api.del(`/services/${svc.id}`, 404);
    expect((await api.get(`/applications/${apps.solo}`)).services).toEqual([]);
  });
});
