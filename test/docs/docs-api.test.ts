import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';

/**
 * The README and docs/*.md against the running application (issue 21 item 6): every route is
 * documented, and what the README says an answer holds is what the answer holds.
 */

const README = readFileSync(projectPath('README.md'), 'utf8');
const DOCS = [
  README,
  ...readdirSync(projectPath('docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(projectPath('docs', f), 'utf8')),
].join('\n');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * How a route's path is written in the docs: its parameters in braces (any name), and the prefixes
 * `/api/v1` and `/tenants/{tenantID}` optional (module pages say once that paths start there).
 */
function documentedPath(url: string): RegExp {
  const path = url.replace(/^\/api\/v1/, '').replace(/^\/tenants\/:tenantID(?=\/)/, '');
  return new RegExp(
    `${path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '\\{[^}/]*\\}' : escape(seg)))
      .join('/')}(?![\\w/{-])`,
  );
}

let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t?.close());

describe('the README and docs against the application', () => {
  it('name every route the service serves', () => {
    const missing = t.app.routeTable
      .filter((route) => ([] as string[]).concat(route.method).some((m) => m !== 'HEAD'))
      .filter((route) => !documentedPath(route.url).test(DOCS))
      .map((route) => `${([] as string[]).concat(route.method).join(',')} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('give every field of the 202 of POST /findings/run', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/run`, payload: {}, expect: 202 });
    const run = res.json() as Record<string, unknown> & { stats: Record<string, unknown> };
    const audits = README.slice(README.indexOf('- **Audits**'), README.indexOf('- **Findings**'));
    const flat = audits.replace(/\s+/g, ' ');
    const listed = /returns as it progresses: `\{([^}]*)\}`/.exec(flat)?.[1]?.split(', ');
    expect(listed?.sort()).toEqual(Object.keys(run).sort());
    for (const field of Object.keys(run.stats)) expect(flat, field).toContain(`\`${field}\``);
    expect(flat).toContain('`{rule_id, evaluations, errors, budget_exceeded, stopped, error}`');
  });

  it('say what a fresh install lacks: no OSV or NVD data, so package matching is off', async () => {
    const stats = (await call(t.app, tenant.admin.token, { url: '/api/v1/vulndb/stats', expect: 200 })).json();
    expect(stats.counts).toMatchObject({ nvd_cves: 0, osv_advisories: 0, osv_affected_packages: 0 });
    expect(stats.package_matching.enabled).toBe(false);
    expect(README.replace(/\s+/g, ' ')).toContain('**It has no OSV or NVD data**: until OSV advisories are loaded no package is matched');
  });
});
