import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, loginAdmin, type TenantFixture } from '../harness/identity.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

describe('account tenants', () => {
  it('creates a tenant with a default workspace; the creator becomes its tenant-admin', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'Acme Cloud' } });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    // The plan of the tenant the creator is signed in to (enterprise, the default).
    expect(created).toMatchObject({ name: 'Acme Cloud', slug: 'acme-cloud', plan: 'enterprise', default_workspace_id: expect.any(String), created_at: expect.any(String) });
    const switched = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: created.id }, expect: 200 });
    expect(switched.json()).toMatchObject({ role: 'tenant-admin', workspace_id: created.default_workspace_id });
    const workspaces = await call(t.app, switched.json().token, { url: '/api/v1/workspaces', expect: 200 });
    expect(workspaces.json().items).toEqual([expect.objectContaining({ id: created.default_workspace_id, is_default: true, name: 'default' })]);
  });

  it('makes the slug unique automatically and refuses a taken explicit slug with 409', async () => {
    const again = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'Acme Cloud' }, expect: 201 });
    expect(again.json().slug).toMatch(/^acme-cloud-[0-9a-f]{6}$/);
    const taken = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'X', slug: 'acme-cloud' } });
    expect(taken.statusCode).toBe(409);
    const bad = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'X', slug: 'Not A Slug' } });
    expect(bad.statusCode).toBe(400);
  });

  it('lists the tenants the caller belongs to, paged', async () => {
    const res = await call(t.app, tenant.admin.token, { url: '/api/v1/account/tenants?per_page=2', expect: 200 });
    const body = res.json();
    expect(body).toMatchObject({ page: 1, per_page: 2, total: 3, total_pages: 2 });
    const second = await call(t.app, tenant.admin.token, { url: '/api/v1/account/tenants?per_page=2&page=2', expect: 200 });
    expect(second.json().items).toHaveLength(1);
    expect([...body.items, ...second.json().items].map((i: { id: string }) => i.id)).toContain(tenant.id);
    const ro = await call(t.app, tenant.users['read-only'].token, { url: '/api/v1/account/tenants', expect: 200 });
    expect(ro.json().items.map((i: { id: string }) => i.id)).toEqual([tenant.id]);
  });

  it("the plan is a system-admin's decision: a free tenant's admin gets free, and naming another plan is 403", async () => {
    const free = await buildTenant(t, { plan: 'free' });
    for (const plan of ['enterprise', 'pro']) {
      const res = await call(t.app, free.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: `Free Upgrade ${plan}`, plan } });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toBe('only a system-admin can choose the plan: a new tenant gets the plan of the tenant you are signed in to (free)');
    }
    const inherited = await call(t.app, free.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'Free Child' }, expect: 201 });
    expect(inherited.json().plan).toBe('free');
    const same = await call(t.app, free.admin.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'Free Child', plan: 'free' }, expect: 201 });
    expect(same.json().plan).toBe('free');
    // Nothing was created by the refused requests.
    const names = (await call(t.app, free.admin.token, { url: '/api/v1/account/tenants?per_page=100', expect: 200 })).json().items.map((i: { name: string }) => i.name);
    expect(names.filter((n: string) => n.startsWith('Free Upgrade'))).toEqual([]);
    // A system-admin names any plan.
    const system = await loginAdmin(t);
    const chosen = await call(t.app, system.token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'Chosen Plan', plan: 'pro' }, expect: 201 });
    expect(chosen.json().plan).toBe('pro');
  });

  it('refuses tenant creation to roles below tenant-admin', async () => {
    const res = await call(t.app, tenant.users['security-analyst'].token, { method: 'POST', url: '/api/v1/account/tenants', payload: { name: 'nope' } });
    expect(res.statusCode).toBe(403);
  });
});

describe('tenant record', () => {
  it('GET returns the tenant; PUT updates it and is audit-logged; only system-admin changes the plan', async () => {
    const got = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}`, expect: 200 });
    expect(got.json()).toMatchObject({ id: tenant.id, plan: 'enterprise', default_workspace_id: tenant.defaultWorkspaceId });
    const renamed = await call(t.app, tenant.admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}`,
      payload: { name: 'Renamed', onboarding_completed: true },
      expect: 200,
    });
    expect(renamed.json()).toMatchObject({ name: 'Renamed', onboarding_completed: true });
    const plan = await call(t.app, tenant.admin.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}`, payload: { plan: 'free' } });
    expect(plan.statusCode).toBe(403);
    expect(plan.json().error.message).toBe('only a system-admin can change the plan');
    const system = await loginAdmin(t);
    t.clock.advance(1000);
    await call(t.app, system.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}`, payload: { plan: 'pro' }, expect: 200 });
    const admin = await fresh(t, tenant.admin);
    const log = await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=tenant.updated`, expect: 200 });
    expect(log.json().items[0].details).toEqual({ previous: { plan: 'enterprise' }, changes: { plan: 'pro' } });
    expect(log.json().items[0].actor_id).toBe(system.user_id);
  });

  it('PUT needs tenant:update (403 for an auditor) and answers 403 on another tenant', async () => {
    const auditor = await fresh(t, tenant.users.auditor);
    expect((await call(t.app, auditor.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}`, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await call(t.app, (await fresh(t, tenant.admin)).token, { url: `/api/v1/tenants/${other.id}` })).statusCode).toBe(403);
  });

  it('DELETE removes the tenant, its workspaces and all their data', async () => {
    const doomed = await buildTenant(t);
    const extra = await call(t.app, doomed.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'second' }, expect: 201 });
    await enqueueJob(t.deps.database.db, t.clock, { kind: 'test.tenant-data', tenantId: doomed.id, workspaceId: extra.json().id });
    const res = await call(t.app, doomed.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${doomed.id}` });
    expect(res.statusCode).toBe(204);
    const db = t.deps.database.db;
    expect(await db.selectFrom('workspaces').select('id').where('tenant_id', '=', doomed.id).execute()).toEqual([]);
    expect(await db.selectFrom('memberships').select('user_id').where('tenant_id', '=', doomed.id).execute()).toEqual([]);
    expect(await db.selectFrom('jobs').select('id').where('tenant_id', '=', doomed.id).execute()).toEqual([]);
    expect(await db.selectFrom('audit_logs').select('id').where('tenant_id', '=', doomed.id).execute()).toEqual([]);
    const system = await loginAdmin(t);
    expect((await call(t.app, system.token, { url: `/api/v1/tenants/${doomed.id}` })).statusCode).toBe(404);
  });
});

describe('workspaces', () => {
  it('creates, lists, reads, renames and deletes workspaces of the token tenant', async () => {
    const admin = await fresh(t, tenant.admin);
    const created = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'prod' }, expect: 201 });
    const ws = created.json();
    expect(ws).toMatchObject({ name: 'prod', is_default: false, tenant_id: tenant.id });
    const duplicate = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'prod' } });
    expect(duplicate.statusCode).toBe(409);
    const list = await call(t.app, admin.token, { url: '/api/v1/workspaces', expect: 200 });
    expect(list.json().items[0].is_default).toBe(true);
    expect((await call(t.app, admin.token, { url: `/api/v1/workspaces/${ws.id}`, expect: 200 })).json().name).toBe('prod');
    const renamed = await call(t.app, admin.token, { method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, payload: { name: 'production' }, expect: 200 });
    expect(renamed.json().name).toBe('production');
    expect((await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/workspaces/${ws.id}` })).statusCode).toBe(204);
    expect((await call(t.app, admin.token, { url: `/api/v1/workspaces/${ws.id}` })).statusCode).toBe(404);
    const log = await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=workspace.*`, expect: 200 });
    expect(log.json().items.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['workspace.created', 'workspace.renamed', 'workspace.deleted']));
  });

  it('refuses to delete the default workspace with 400', async () => {
    const admin = await fresh(t, tenant.admin);
    const res = await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/workspaces/${tenant.defaultWorkspaceId}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('the default workspace cannot be deleted');
  });

  it("answers 404 for another tenant's workspace", async () => {
    const admin = await fresh(t, tenant.admin);
    expect((await call(t.app, admin.token, { url: `/api/v1/workspaces/${other.defaultWorkspaceId}` })).statusCode).toBe(404);
    expect((await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/workspaces/${other.defaultWorkspaceId}` })).statusCode).toBe(404);
    expect((await call(t.app, admin.token, { method: 'PATCH', url: `/api/v1/workspaces/${other.defaultWorkspaceId}`, payload: { name: 'x' } })).statusCode).toBe(404);
  });

  it('read-only may list but not create', async () => {
    const ro = await fresh(t, tenant.users['read-only']);
    expect((await call(t.app, ro.token, { url: '/api/v1/workspaces' })).statusCode).toBe(200);
    expect((await call(t.app, ro.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'x' } })).statusCode).toBe(403);
  });
});
