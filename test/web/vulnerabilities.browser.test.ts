import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../harness/app.js';
import { call, createApiKey, loginAdmin } from '../harness/identity.js';
import { buildReport, inventoryPackages, sendReport } from '../agents/helpers.js';
import { EPSS_KEV, KEV_JSON, NVD_FEED, OSV_DEBIAN_GZ } from '../vulndb/helpers.js';

/**
 * The vulnerability screens over real data seeded through the API: the KEV catalog, EPSS scores, NVD
 * records and Debian advisories uploaded as the platform operator (local fixtures, no network), a
 * host's agent report with the build machine's 710 dpkg packages, an application over the host and a
 * business service with it. A CVE is looked up, the KEV catalog filtered, the host's packages opened
 * and the service's SBOM downloaded; axe on each screen.
 */
const web = useConsole();
const SLOW = { timeout: 30_000 };
const CVE = 'CVE-2021-44228';
const tenantApi = (path: string) => `/api/v1/tenants/${web.app.tenant.id}${path}`;
const analyst = () => web.app.tenant.users['security-analyst'];
const get = async (url: string, token = analyst().token) => (await call(web.app.t.app, token, { url, expect: 200 })).json();

let hostId: string;
let serviceId: string;
let groupId: string;

/** One file as a multipart upload, the way the operator's browser or curl sends it. */
function multipart(path: string) {
  const boundary = `----cg-web-${Math.random().toString(16).slice(2)}`;
  const name = path.split('/').pop()!;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    readFileSync(path),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Uploads a vulnerability data file and waits for the worker to apply it. */
async function importFile(token: string, path: string): Promise<void> {
  const body = multipart(path);
  const run = (await call(web.app.t.app, token, { method: 'POST', url: '/api/v1/vulndb/imports', payload: body.payload, headers: body.headers, expect: 202 })).json();
  // expect.poll belongs to tests; this runs in beforeAll.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { status, error } = await get(`/api/v1/vulndb/imports/${run.id}`, token);
    if (status === 'succeeded' || status === 'unchanged') return;
    if (status === 'failed' || status === 'cancelled' || Date.now() > deadline) throw new Error(`import of ${path}: ${status} ${error ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Full-page screenshots from the top: scrolled down, the shell's fixed header lands mid-picture. */
async function screenshot(page: Page, path: string): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
}

const percent = (value: number) => new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 3 }).format(value);

describe.runIf(chromiumPath())('the vulnerability screens', () => {
  beforeAll(async () => {
    const { t, tenant } = web.app;
    const system = await loginAdmin(t);
    // The advisories first: a report's packages are matched when it arrives.
    for (const file of [KEV_JSON, EPSS_KEV, NVD_FEED, OSV_DEBIAN_GZ]) await importFile(system.token, file);

    const key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
    const report = buildReport({ packages: inventoryPackages() });
    const ingested = await sendReport(t, key, report.agent_id, report);
    expect(ingested.statusCode, ingested.body).toBe(200);
    hostId = ingested.json().node_id;
    expect(ingested.json().packages.vulnerable).toBeGreaterThan(0);

    const admin = tenant.admin.token;
    const app = (
      await call(t.app, admin, { method: 'POST', url: tenantApi('/applications'), payload: { name: 'Web hosts', filter: 'type = "host.os.instance"' }, expect: 201 })
    ).json();
    serviceId = (
      await call(t.app, admin, {
        method: 'POST',
        url: tenantApi('/services'),
        payload: { name: 'Storefront', criticality: 'high', owner: 'web team', application_ids: [app.id] },
        expect: 201,
      })
    ).json().id;
    groupId = (
      await call(t.app, admin, { method: 'POST', url: tenantApi('/asset-groups'), payload: { name: 'Debian hosts', filter: 'type = "host.os.instance"' }, expect: 201 })
    ).json().id;
  }, 300_000);

  it('looks up a CVE and shows its KEV entry, EPSS score, NVD fields and references', { timeout: 240_000 }, async () => {
    const record = await get(`/api/v1/vulndb/cve/${CVE}`);
    expect(record.is_kev).toBe(true);
    expect(record.epss_score).not.toBeNull();

    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Vulnerabilities' }).click();
    await page.getByLabel('CVE id').fill('not-a-cve');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('A CVE id looks like CVE-2021-44228.').waitFor();
    await page.getByLabel('CVE id').fill(CVE.toLowerCase());
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.waitForURL((url) => url.searchParams.get('cve') === CVE);
    const detail = page.getByTestId('cve-detail');
    await detail.getByRole('heading', { name: CVE }).waitFor(SLOW);
    expect(await detail.getByText('Known exploited (KEV)').isVisible()).toBe(true);
    const kev = page.getByRole('region', { name: 'CISA KEV' });
    expect(await kev.getByText(record.kev_vulnerability_name).isVisible()).toBe(true);
    const epss = page.getByRole('region', { name: 'EPSS' });
    const field = (label: string) => epss.locator('div', { has: page.getByText(label, { exact: true }) }).locator('dd');
    expect(await field('Probability of exploitation (30 days)').textContent()).toBe(percent(record.epss_score));
    expect(await field('Percentile').textContent()).toBe(percent(record.epss_percentile));
    const nvd = page.getByRole('region', { name: 'NVD' });
    expect(await nvd.getByText(record.cvss_v3_vector).isVisible()).toBe(true);
    const references = page.getByRole('region', { name: 'References' }).getByRole('link');
    expect(await references.count()).toBe(record.references.length);
    expect(await references.first().getAttribute('href')).toBe(record.references[0]);
    await screenshot(page, '/tmp/vulns-cve.png');
    await expectAccessible(page);

    // A CVE no source knows is said so, not an error.
    await page.getByLabel('CVE id').fill('CVE-1999-99999');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('No source knows CVE-1999-99999.').waitFor(SLOW);
    await context.close();
  });

  it('filters the KEV catalog by search and ransomware use, in the URL', { timeout: 240_000 }, async () => {
    const matching = await get('/api/v1/vulndb/kev?search=citrix&per_page=50');
    const known = await get('/api/v1/vulndb/kev?search=citrix&ransomware=known&per_page=50');
    expect(matching.total).toBeGreaterThan(known.total);
    expect(known.total).toBeGreaterThan(0);

    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto('/vulnerabilities?tab=kev');
    const table = page.getByRole('table', { name: 'Known exploited vulnerabilities' });
    await table.waitFor(SLOW);
    await page.getByLabel('Search').fill('citrix');
    await page.waitForURL((url) => url.searchParams.get('search') === 'citrix');
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(matching.items.length + 1);
    await page.getByLabel('Ransomware use', { exact: true }).click();
    await page.getByRole('option', { name: 'Known', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('ransomware') === 'known');
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(known.items.length + 1);
    expect(await table.getByRole('link', { name: known.items[0].cve_id }).isVisible()).toBe(true);
    await screenshot(page, '/tmp/vulns-kev.png');
    await expectAccessible(page);

    // A catalog row leads to its lookup.
    await table.getByRole('link', { name: known.items[0].cve_id }).click();
    await page.getByTestId('cve-detail').getByRole('heading', { name: known.items[0].cve_id }).waitFor(SLOW);
    await context.close();
  });

  it("opens a host's packages with their CVEs", { timeout: 240_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto('/vulnerabilities?tab=hosts');
    await page.getByRole('table', { name: 'Hosts reported by agents' }).getByRole('link', { name: 'web-1' }).click();
    await page.waitForURL((url) => url.pathname === `/vulnerabilities/hosts/${encodeURIComponent(hostId)}`);
    await page.getByRole('heading', { name: 'Packages of web-1' }).waitFor(SLOW);

    // The counts the page shows are the host SBOM's: its packages, and those a vulnerability affects.
    const sbom = await get(tenantApi(`/nodes/${encodeURIComponent(hostId)}/sbom`));
    const packages = sbom.components.filter((c: { type: string }) => c.type !== 'operating-system');
    const affected = new Set(sbom.vulnerabilities.flatMap((v: { affects: Array<{ ref: string }> }) => v.affects.map((a) => a.ref)));
    const vulnerable = packages.filter((c: { 'bom-ref': string }) => affected.has(c['bom-ref']));
    expect(vulnerable.length).toBeGreaterThan(0);
    expect(await page.getByTestId('host-summary').textContent()).toBe(
      `Packages: ${packages.length.toLocaleString('en-US')} · with known vulnerabilities: ${vulnerable.length.toLocaleString('en-US')}`,
    );
    await page.getByRole('switch', { name: 'Only vulnerable packages' }).click({ force: true });
    await page.waitForURL((url) => url.searchParams.get('vulnerable') === '1');
    const table = page.getByRole('table', { name: 'Installed packages and their CVEs' });
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(Math.min(vulnerable.length, 50) + 1);
    const first = sbom.vulnerabilities.find((v: { affects: Array<{ ref: string }> }) => v.affects.some((a) => a.ref === vulnerable[0]['bom-ref'])).id;
    expect(await table.getByRole('link', { name: first, exact: true }).first().getAttribute('href')).toBe(`/vulnerabilities?cve=${encodeURIComponent(first)}`);
    await screenshot(page, '/tmp/vulns-host.png');
    await expectAccessible(page);
    await context.close();
  });

  it("shows the business service's health, members and CVE exposure, and downloads its SBOM", { timeout: 240_000 }, async () => {
    const exposure = await get(tenantApi(`/services/${serviceId}/cve-exposure`));
    expect(exposure.summary.cves).toBeGreaterThan(0);

    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Services' }).click();
    const services = page.getByRole('table', { name: 'Business services and their health' });
    await services.waitFor(SLOW);
    await screenshot(page, '/tmp/vulns-services.png');
    await expectAccessible(page);
    await services.getByRole('link', { name: 'Storefront' }).click();
    await page.getByRole('heading', { name: 'Storefront', level: 1 }).waitFor(SLOW);
    expect(await page.getByRole('region', { name: 'Applications' }).getByRole('link', { name: 'Web hosts' }).isVisible()).toBe(true);
    await expect
      .poll(() => page.getByTestId('exposure-summary').textContent(), SLOW)
      .toBe(
        `CVEs: ${exposure.summary.cves} · in KEV: ${exposure.summary.kev} · high EPSS: ${exposure.summary.high_epss} · reachable from the Internet: ${exposure.summary.exposed} · hosts with agent data: 1 · packages: ${exposure.packages.toLocaleString('en-US')}`,
      );
    const rows = page.getByRole('table', { name: 'CVEs reachable in the service, riskiest first' }).getByRole('row');
    expect(await rows.count()).toBe(exposure.items.length + 1);
    await screenshot(page, '/tmp/vulns-service.png');
    await expectAccessible(page);

    const [download] = await Promise.all([page.waitForEvent('download', SLOW), page.getByRole('link', { name: 'Download SBOM (CycloneDX)' }).click()]);
    expect(download.suggestedFilename()).toBe('Storefront.cdx.json');
    const bom = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5' });
    expect(bom.metadata.properties).toContainEqual({ name: 'controlgraph:hosts', value: '1' });
    expect(bom.vulnerabilities.length).toBeGreaterThan(0);

    // The application and the asset group list their members.
    await page.getByRole('link', { name: 'Web hosts' }).click();
    await page.getByRole('heading', { name: 'Web hosts', level: 1 }).waitFor(SLOW);
    expect(await page.getByRole('table', { name: 'Member resources and their health' }).getByText('web-1').isVisible()).toBe(true);
    await expectAccessible(page);
    await page.goto(`/services/asset-groups/${groupId}`);
    await page.getByRole('table', { name: 'Resources in the group' }).getByText('web-1').waitFor(SLOW);
    await expectAccessible(page);
    await context.close();
  });

  it('shows the platform operator the imports with their counts', { timeout: 240_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, ADMIN_USERNAME, ADMIN_PASSWORD);
    await page.goto('/vulnerabilities?tab=imports');
    const table = page.getByRole('table', { name: 'Imports of vulnerability data' });
    await table.waitFor(SLOW);
    await expect.poll(() => table.getByText('osv-debian12-host-subset.json.gz', { exact: false }).count(), SLOW).toBeGreaterThan(0);
    await page.getByLabel('Source', { exact: true }).click();
    await page.getByRole('option', { name: 'KEV', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('source') === 'kev');
    await expect.poll(() => table.getByText('osv-debian12-host-subset.json.gz', { exact: false }).count(), SLOW).toBe(0);
    await screenshot(page, '/tmp/vulns-imports.png');
    await expectAccessible(page);
    await context.close();
  });

  it('hides the imports from a tenant user', { timeout: 120_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto('/vulnerabilities?tab=imports');
    await page.getByLabel('CVE id').waitFor(SLOW);
    expect(await page.getByRole('tab', { name: 'Imports' }).count()).toBe(0);
    await context.close();
  });
});
