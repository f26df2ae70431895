import { randomUUID } from 'node:crypto';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness/app.js';
import { buildTenant, call, createApiKey, type Session, type TenantFixture } from './harness/identity.js';
import { ROLES, permissionsOf, type Role } from '../src/platform/rbac/roles.js';

/**
 * Generated from the route table, so every route added later is covered without editing this file:
 * every non-public route answers 401 without credentials, 403 to a credential lacking its declared
 * permission, and 403 to another tenant's credential on a tenant path.
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let keyWithout: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  // Two narrow keys: whatever permission a route needs, one of them lacks it.
  keyWithout = {
    agents: (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key,
    nodes: (await createApiKey(t, tenant, { permissions: ['nodes:read'] })).key,
  };
});
afterAll(() => t.close());

interface Case {
  method: string;
  url: string;
  route: RouteOptions;
}

function cases(): Case[] {
  const result: Case[] = [];
  for (const route of t.app.routeTable) {
    if ((route.config as { public?: boolean } | undefined)?.public) continue;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    for (const method of methods) result.push({ method, url: route.url, route });
  }
  return result;
}

function fill(url: string, tenantId: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => (name === 'tenantID' ? tenantId : randomUUID()));
}

function permissionOf(route: RouteOptions): string | undefined {
  return (route.config as { permission?: string } | undefined)?.permission;
}

/** A credential of `tenant` that lacks the permission: the lowest role without it, else a narrow key. */
function lacking(permission: string): string {
  const role = (ROLES.filter((r) => r !== 'system-admin') as Exclude<Role, 'system-admin'>[]).find((r) => !permissionsOf(r).has(permission));
  if (role) return (tenant.users[role] as Session).token;
  return permission === 'agents:write' ? keyWithout.nodes! : keyWithout.agents!;
}

describe('route-table authorization', () => {
  it('covers a non-trivial route table', () => {
    expect(cases().length).toBeGreaterThan(20);
  });

  it('every non-public route answers 401 without a token', async () => {
    const failures: string[] = [];
    for (const c of cases()) {
      const res = await t.app.inject({ method: c.method as 'GET', url: fill(c.url, tenant.id) });
      if (res.statusCode !== 401 || res.json().error?.code !== 'UNAUTHORIZED') failures.push(`${c.method} ${c.url}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('every route with a permission answers 403 to a credential lacking it', async () => {
    const failures: string[] = [];
    for (const c of cases()) {
      const permission = permissionOf(c.route);
      if (!permission) continue;
      const res = await call(t.app, lacking(permission), { method: c.method as 'GET', url: fill(c.url, tenant.id) });
      if (res.statusCode !== 403 || res.json().error.message !== `missing permission ${permission}`) {
        failures.push(`${c.method} ${c.url} (${permission}): ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("every tenant path answers 403 (or 404) to another tenant's credentials, even with every permission", async () => {
    const failures: string[] = [];
    for (const c of cases()) {
      if (!c.url.includes(':tenantID')) continue;
      const res = await call(t.app, other.admin.token, { method: c.method as 'GET', url: fill(c.url, tenant.id) });
      if (![403, 404].includes(res.statusCode)) failures.push(`${c.method} ${c.url}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('public routes under /api/v1 are the known ones, each with what stands in for a token', () => {
    const open = t.app.routeTable
      .filter((route) => route.url.startsWith('/api/v1/') && (route.config as { public?: boolean } | undefined)?.public)
      .flatMap((route) =>
        [route.method]
          .flat()
          .filter((m) => m !== 'HEAD')
          .map((m) => `${m} ${route.url}`),
      )
      .sort();
    expect(open).toEqual(
      [
        // The API's description and version: no tenant data.
        'GET /api/v1/openapi.json',
        'GET /api/v1/openapi.yaml',
        'GET /api/v1/version',
        'GET /api/v1/status',
        // Sign-in: the password, refresh token or session cookie is the credential.
        'POST /api/v1/auth/token',
        'POST /api/v1/auth/refresh',
        'POST /api/v1/auth/session',
        'POST /api/v1/auth/session/refresh',
        'DELETE /api/v1/auth/session',
        // Single sign-on: the identity provider's signed answer is the credential.
        'GET /api/v1/auth/oidc/:slug/login',
        'GET /api/v1/auth/oidc/:slug/callback',
        'GET /api/v1/auth/saml/:slug/metadata',
        'GET /api/v1/auth/saml/:slug/login',
        'GET /api/v1/auth/saml/:slug/slo',
        'POST /api/v1/auth/saml/:slug/acs',
        // A report's signed link (report.generated): the signature is the credential.
        'GET /api/v1/tenants/:tenantID/reports/:reportID/file',
        // An outside respondent's link (issue 25): its token (Authorization: Bearer cgr_…) is the
        // credential, and it reaches only its own assessment (respondent-links.test.ts, tenancy proof).
        'GET /api/v1/respond/assessment',
        'POST /api/v1/respond/assessment/responses',
        'POST /api/v1/respond/assessment/submit',
        'GET /api/v1/respond/evidence',
        'POST /api/v1/respond/evidence',
      ].sort(),
    );
  });

  it('the respondent routes answer 401 without a link token', async () => {
    const failures: string[] = [];
    for (const route of t.app.routeTable.filter((r) => r.url.startsWith('/api/v1/respond/'))) {
      for (const method of [route.method].flat().filter((m) => m !== 'HEAD')) {
        const res = await t.app.inject({ method: method as 'GET', url: route.url });
        if (res.statusCode !== 401 || res.json().error?.code !== 'UNAUTHORIZED') failures.push(`${method} ${route.url}: ${res.statusCode}`);
        // Neither a user's token nor an API key opens them.
        const user = await call(t.app, tenant.admin.token, { method: method as 'GET', url: route.url });
        if (user.statusCode !== 401) failures.push(`${method} ${route.url} with a user token: ${user.statusCode}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('routes without a declared permission are the known authenticated-only ones', () => {
    const open = cases()
      .filter((c) => !permissionOf(c.route))
      .map((c) => `${c.method} ${c.url}`)
      .sort();
    // Each of these acts only on the caller's own identity or lists what the caller may see.
    expect(open).toEqual(
      [
        'GET /api/v1/account/tenants',
        // The signed-in user's own invitations into other tenants.
        'GET /api/v1/account/invitations',
        'POST /api/v1/account/invitations/:invitationID/accept',
        'POST /api/v1/account/invitations/:invitationID/decline',
        'GET /api/v1/auth/me',
        'POST /api/v1/auth/logout',
        // The signed-in user's own second factor (multi-factor sign-in).
        'GET /api/v1/auth/mfa',
        'POST /api/v1/auth/mfa/totp/enroll',
        'POST /api/v1/auth/mfa/totp/confirm',
        'DELETE /api/v1/auth/mfa/totp',
        'POST /api/v1/auth/mfa/recovery-codes',
        'POST /api/v1/auth/select-tenant',
        'POST /api/v1/auth/switch-workspace',
        // The console's cookie session moved to another tenant or workspace of the user (as the two above).
        'POST /api/v1/auth/session/tenant',
        'POST /api/v1/auth/session/workspace',
        // Vulnerability intelligence is public knowledge: any authenticated caller may read it.
        'GET /api/v1/vulndb/cve/:cveId',
        'GET /api/v1/vulndb/check/:cveId',
        'GET /api/v1/vulndb/kev',
        'GET /api/v1/vulndb/stats',
      ].sort(),
    );
  });
});
