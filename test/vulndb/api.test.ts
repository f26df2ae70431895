import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, loginAdmin, type Session, type TenantFixture } from '../harness/identity.js';
import { EPSS_KEV, importer, KEV_JSON, NVD_FEED, OSV_NPM, readJson, scratchDir, vulndbModules } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let readOnly: Session;
let system: Session;
const tmp = scratchDir();
const catalog = readJson(KEV_JSON) as { vulnerabilities: Array<Record<string, any>> };
const kev = catalog.vulnerabilities;
const epssLines = readFileSync(EPSS_KEV, 'utf8').trim().split('\n').slice(1);
const epss = new Map(epssLines.map((l) => l.split(',')).map(([cve, score, pct]) => [cve!, { score: Number(score), percentile: Number(pct) }]));

beforeAll(async () => {
  t = await createTestApp({ extraModules: vulndbModules(), env: { CONTROLGRAPH_VULNDB_SOURCES: `kev=${KEV_JSON},epss=${EPSS_KEV}` } });
  tenant = await buildTenant(t);
  readOnly = tenant.users['read-only'];
  system = await loginAdmin(t);
  const run = importer(t.deps.database.db, t.clock);
  // The KEV CVEs' scores plus two real non-KEV scores from the full snapshot (one high, one low).
  const scores = tmp.write('epss.csv', `cve,epss,percentile\n${epssLines.join('\n')}\nCVE-1999-0002,0.278580000,0.979290000\nCVE-1999-0001,0.033510000,0.876500000\n`);
  for (const file of [KEV_JSON, scores, NVD_FEED, OSV_NPM]) expect((await run(file)).status).toBe('succeeded');
});
afterAll(async () => {
  await t.close();
  tmp.remove();
});

const get = (url: string, token: string | null = readOnly.token) => call(t.app, token, { url });

describe('GET /api/v1/vulndb/cve/{cveId}', () => {
  it('combines KEV, EPSS and NVD into the spec record', async () => {
    const res = await get('/api/v1/vulndb/cve/CVE-2021-44228');
    expect(res.statusCode).toBe(200);
    const record = res.json();
    const entry = kev.find((v) => v.cveID === 'CVE-2021-44228')!;
    expect(record).toMatchObject({
      cve_id: 'CVE-2021-44228',
      cvss_v3_score: 10,
      cvss_v3_severity: 'CRITICAL',
      cvss_v3_source: 'nvd',
      is_kev: true,
      kev_date_added: entry.dateAdded,
      kev_due_date: entry.dueDate,
      known_ransomware_campaign_use: entry.knownRansomwareCampaignUse,
      epss_score: epss.get('CVE-2021-44228')!.score,
      epss_percentile: epss.get('CVE-2021-44228')!.percentile,
      vendor_project: 'Apache',
      product_name: 'Log4j2',
      vuln_status: 'Analyzed',
      sources: ['kev', 'epss', 'nvd'],
    });
    expect(record.description).toMatch(/^Apache Log4j2/);
    expect(record.references.length).toBeGreaterThan(40);
    expect(record.references).toContain('https://logging.apache.org/log4j/2.x/security.html');
    expect(record.cwes).toEqual(expect.arrayContaining(['CWE-502', 'CWE-20']));
    expect(record.affected_cpes).toContainEqual(
      expect.objectContaining({ criteria: 'cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*', version_start_including: '2.13.0', version_end_excluding: '2.15.0' }),
    );
    expect(record.published).toBe('2021-12-10T10:15:09.143Z');
  });

  it('accepts a lower-case id; a KEV CVE without NVD metrics has no score', async () => {
    const res = await get('/api/v1/vulndb/cve/cve-2023-47246');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ cve_id: 'CVE-2023-47246', is_kev: true, cvss_v3_score: null, cvss_v3_severity: null, vuln_status: 'Received' });
  });

  it('a CVE known only from an OSV advisory: CVSS computed from its vector, the affected packages listed', async () => {
    const record = (await get('/api/v1/vulndb/cve/CVE-2024-48913')).json();
    expect(record).toMatchObject({
      cve_id: 'CVE-2024-48913',
      is_kev: false,
      kev_date_added: null,
      epss_score: null,
      cvss_v3_vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:H/A:N',
      cvss_v3_score: 5.9,
      cvss_v3_severity: 'MEDIUM',
      cvss_v3_source: 'osv',
      sources: ['osv'],
      advisories: [expect.objectContaining({ id: 'GHSA-2234-fmw7-43wr' })],
      affected_packages: [
        {
          advisory_id: 'GHSA-2234-fmw7-43wr',
          ecosystem: 'npm',
          name: 'hono',
          purl: 'pkg:npm/hono',
          ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '4.6.5' }] }],
          listed_versions: 0,
        },
      ],
    });
    expect(record.description).toMatch(/CSRF/);
  });

  it('404 for a well-formed unknown CVE, 400 for a malformed id, 401 without a token', async () => {
    const unknown = await get('/api/v1/vulndb/cve/CVE-2099-99999');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'CVE-2099-99999 is not known to the vulnerability store' });
    for (const bad of ['CVE-21-1', 'log4shell', 'CVE-2021-44228x', 'CVE-2021-123']) {
      const res = await get(`/api/v1/vulndb/cve/${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
    }
    expect((await get('/api/v1/vulndb/cve/CVE-2021-44228', null)).statusCode).toBe(401);
  });
});

describe('GET /api/v1/vulndb/check/{cveId}', () => {
  const lowKev = kev.map((v) => v.cveID as string).find((id) => epss.get(id)!.score < 0.1)!;

  it('flags a KEV CVE with a high EPSS score for both reasons', async () => {
    const res = await get('/api/v1/vulndb/check/CVE-2021-44228');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ cve_id: 'CVE-2021-44228', known: true, flagged: true, reasons: ['known_exploited', 'high_epss'], is_kev: true, epss_threshold: 0.1 });
    expect(res.json().reason).toMatch(
      /^in the CISA KEV catalog since 2021-12-10 \(remediation due 2021-12-24\); EPSS 0\.9\d+ \(percentile [\d.]+\) is at or above the threshold 0\.1$/,
    );
  });

  it('flags a KEV CVE with a low score, and a non-KEV CVE with a score at or above 0.1', async () => {
    expect((await get(`/api/v1/vulndb/check/${lowKev}`)).json()).toMatchObject({ flagged: true, reasons: ['known_exploited'] });
    const high = (await get('/api/v1/vulndb/check/CVE-1999-0002')).json();
    expect(high).toMatchObject({ flagged: true, reasons: ['high_epss'], is_kev: false, epss_score: 0.27858 });
    expect(high.reason).toBe('not in the CISA KEV catalog; EPSS 0.27858 (percentile 0.97929) is at or above the threshold 0.1');
  });

  it('does not flag a low score; the threshold can be set per request', async () => {
    const low = (await get('/api/v1/vulndb/check/CVE-1999-0001')).json();
    expect(low).toMatchObject({ known: true, flagged: false, reasons: [], epss_score: 0.03351 });
    expect(low.reason).toContain('is below the threshold 0.1');
    expect((await get('/api/v1/vulndb/check/CVE-1999-0001?epss_threshold=0.03')).json()).toMatchObject({ flagged: true, reasons: ['high_epss'], epss_threshold: 0.03 });
    expect((await get('/api/v1/vulndb/check/CVE-1999-0001?epss_threshold=2')).statusCode).toBe(400);
  });

  it('answers for CVEs known without scores and for unknown ones; 400 and 401 as the record', async () => {
    expect((await get('/api/v1/vulndb/check/CVE-2024-48913')).json()).toMatchObject({
      known: true,
      flagged: false,
      epss_score: null,
      reason: 'not in the CISA KEV catalog; no EPSS score',
    });
    expect((await get('/api/v1/vulndb/check/CVE-2099-99999')).json()).toMatchObject({ known: false, flagged: false });
    expect((await get('/api/v1/vulndb/check/nope')).statusCode).toBe(400);
    expect((await get('/api/v1/vulndb/check/CVE-2021-44228', null)).statusCode).toBe(401);
  });
});

describe('GET /api/v1/vulndb/kev', () => {
  it('pages the whole catalog, newest first, with EPSS scores', async () => {
    const first = (await get('/api/v1/vulndb/kev?per_page=10')).json();
    expect(first).toMatchObject({ total: 1404, page: 1, per_page: 10, total_pages: 141 });
    expect(first.items).toHaveLength(10);
    const newest = [...kev].sort((a, b) => (a.dateAdded === b.dateAdded ? (a.cveID < b.cveID ? 1 : -1) : a.dateAdded < b.dateAdded ? 1 : -1));
    expect(first.items.map((i: { cve_id: string }) => i.cve_id)).toEqual(newest.slice(0, 10).map((v) => v.cveID));
    expect(first.items[0]).toMatchObject({ cve_id: 'CVE-2025-48384', vendor_project: 'Git', date_added: '2025-08-25', due_date: '2025-09-15', cwes: ['CWE-59', 'CWE-436'] });
    expect(first.items[0].epss_score).toBe(epss.get('CVE-2025-48384')!.score);
    const last = (await get('/api/v1/vulndb/kev?per_page=10&page=141')).json();
    expect(last.items).toHaveLength(4);
    const all = (await get('/api/v1/vulndb/kev?per_page=500&page=3')).json();
    expect(all.items).toHaveLength(404);
  });

  it('filters by vendor, product, date range, ransomware use, CWE and search', async () => {
    const total = async (query: string) => (await get(`/api/v1/vulndb/kev?${query}`)).json().total;
    expect(await total('vendor=MICROSOFT')).toBe(kev.filter((v) => v.vendorProject.toLowerCase() === 'microsoft').length);
    expect(await total('vendor=Apache&product=log4j2')).toBe(kev.filter((v) => v.vendorProject === 'Apache' && v.product === 'Log4j2').length);
    expect(await total('date_added_from=2024-01-01&date_added_to=2024-12-31')).toBe(kev.filter((v) => v.dateAdded >= '2024-01-01' && v.dateAdded <= '2024-12-31').length);
    expect(await total('ransomware=known')).toBe(kev.filter((v) => v.knownRansomwareCampaignUse === 'Known').length);
    expect(await total('ransomware=unknown')).toBe(kev.filter((v) => v.knownRansomwareCampaignUse === 'Unknown').length);
    expect(await total('cwe=CWE-502')).toBe(kev.filter((v) => (v.cwes as string[]).includes('CWE-502')).length);
    const search = (await get('/api/v1/vulndb/kev?search=log4j')).json();
    expect(search.items.map((i: { cve_id: string }) => i.cve_id)).toContain('CVE-2021-44228');
    expect(await total('search=100%25_')).toBe(0);
    const byEpss = (await get('/api/v1/vulndb/kev?sort=-epss&per_page=1')).json();
    expect(byEpss.items[0].epss_score).toBe(Math.max(...kev.map((v) => epss.get(v.cveID)!.score)));
  });

  it('400 for bad filters, paging or unknown parameters; 401 without a token', async () => {
    for (const query of [
      'date_added_from=2024-13-01',
      'date_added_from=2025-01-01&date_added_to=2024-01-01',
      'per_page=501',
      'page=0',
      'ransomware=maybe',
      'sort=vendor',
      'colour=red',
    ]) {
      const res = await get(`/api/v1/vulndb/kev?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
    }
    expect((await get('/api/v1/vulndb/kev', null)).statusCode).toBe(401);
  });
});

describe('GET /api/v1/vulndb/stats', () => {
  it('counts per source, the last import of each, the data age and the sync configuration', async () => {
    const res = await get('/api/v1/vulndb/stats');
    expect(res.statusCode).toBe(200);
    const stats = res.json();
    expect(stats.counts).toEqual({ kev: 1404, epss: 1406, nvd_cves: 70, cpe_matches: expect.any(Number), osv_advisories: 417, osv_affected_packages: expect.any(Number) });
    expect(stats.package_matching).toEqual({ enabled: true, message: null });
    const kevState = stats.sources.find((s: { source: string }) => s.source === 'kev');
    expect(kevState).toMatchObject({ records: 1404, origin: 'cli', location: KEV_JSON, data_version: '2025.08.25', last_result: 'succeeded', last_error: null });
    // The catalog was released 2025-08-25T17:04:19Z; the test clock stands at 2026-11-23T12:00:00Z.
    expect(kevState.data_age_seconds).toBe(Math.floor((Date.parse('2026-11-23T12:00:00.000Z') - Date.parse('2025-08-25T17:04:19.979Z')) / 1000));
    const epssState = stats.sources.find((s: { source: string }) => s.source === 'epss');
    expect(epssState).toMatchObject({ records: 1406, data_version: null, data_age_seconds: 0 });
    expect(stats.sources.map((s: { source: string }) => s.source)).toEqual(['kev', 'epss', 'nvd', 'osv']);
    expect(stats.epss_threshold).toBe(0.1);
    expect(stats.sync).toMatchObject({
      configured: [
        { source: 'kev', location: KEV_JSON },
        { source: 'epss', location: EPSS_KEV },
      ],
      interval_seconds: 21600,
    });
    expect((await get('/api/v1/vulndb/stats', null)).statusCode).toBe(401);
  });
});

describe('POST /api/v1/vulndb/sync', () => {
  it('is for system-admins only: 403 to every tenant role, 401 without a token', async () => {
    for (const role of ['read-only', 'auditor', 'security-analyst', 'tenant-admin'] as const) {
      const res = await call(t.app, tenant.users[role].token, { method: 'POST', url: '/api/v1/vulndb/sync' });
      expect(res.statusCode, role).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', message: 'missing permission platform:admin' });
    }
    expect((await call(t.app, null, { method: 'POST', url: '/api/v1/vulndb/sync' })).statusCode).toBe(401);
  });

  it('queues one sync job (202), returns the live one to a second request, and runs on the queue', async () => {
    const res = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/sync', expect: 202 });
    const job = res.json();
    expect(job).toMatchObject({ status: 'queued', already_active: false, status_url: `/api/v1/vulndb/sync/${job.job_id}`, sources: [{ source: 'kev' }, { source: 'epss' }] });
    const again = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/sync', expect: 202 });
    expect(again.json()).toMatchObject({ job_id: job.job_id, already_active: true });
    const queued = await call(t.app, system.token, { url: job.status_url, expect: 200 });
    expect(queued.json()).toMatchObject({ job_id: job.job_id, kind: 'vulndb.sync', status: 'queued', runs: [] });
    await t.drain();
    const done = (await call(t.app, system.token, { url: job.status_url, expect: 200 })).json();
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
    // KEV: the file the live catalog came from, unchanged; EPSS: the live scores came from another file.
    expect(done.runs.map((r: { source: string; status: string; trigger: string }) => [r.source, r.status, r.trigger])).toEqual([
      ['kev', 'unchanged', 'manual'],
      ['epss', 'succeeded', 'manual'],
    ]);
    expect(done.runs[1]).toMatchObject({ records: 1404, deleted: 2, unchanged: 1404 });
    const audit = await call(t.app, (await fresh(t, system)).token, { url: `/api/v1/tenants/${system.tenant_id}/audit-logs?action=vulndb.sync_requested`, expect: 200 });
    expect(audit.json().items).toHaveLength(1);
  });

  it('?source= limits the sync; 409 when nothing is configured for it; 404 for an unknown job', async () => {
    const res = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/sync?source=kev', expect: 202 });
    expect(res.json().sources).toEqual([{ source: 'kev', location: KEV_JSON }]);
    await t.drain();
    const none = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/sync?source=nvd' });
    expect(none.statusCode).toBe(409);
    expect(none.json().error).toMatchObject({ code: 'CONFLICT', message: 'no configured vulnerability source for nvd' });
    expect((await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/sync?source=bogus' })).statusCode).toBe(400);
    expect((await call(t.app, system.token, { url: '/api/v1/vulndb/sync/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
    expect((await call(t.app, readOnly.token, { url: '/api/v1/vulndb/sync/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(403);
  });
});

describe('GET /api/v1/vulndb/imports', () => {
  it('lists import runs for system-admins, filterable, newest first; 403 otherwise', async () => {
    const runs = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?per_page=100', expect: 200 })).json();
    expect(runs.total).toBeGreaterThanOrEqual(7);
    expect(runs.items[0]).toMatchObject({ source: 'kev', trigger: 'manual', status: 'unchanged' });
    const kevRuns = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?source=kev', expect: 200 })).json();
    expect(kevRuns.items.every((r: { source: string }) => r.source === 'kev')).toBe(true);
    expect((await call(t.app, readOnly.token, { url: '/api/v1/vulndb/imports' })).statusCode).toBe(403);
    expect((await call(t.app, system.token, { url: '/api/v1/vulndb/imports?status=broken' })).statusCode).toBe(400);
  });
});

describe('OpenAPI', () => {
  it('documents every vulndb route with an operationId, its parameters and responses', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>)
      .filter(([path]) => path.startsWith('/api/v1/vulndb/'))
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
    expect(operations.map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`).sort()).toEqual([
      'GET /api/v1/vulndb/check/{cveId} checkVulnerability',
      'GET /api/v1/vulndb/cve/{cveId} getVulnerability',
      'GET /api/v1/vulndb/imports listVulnerabilityImports',
      'GET /api/v1/vulndb/imports/{importId} getVulnerabilityImport',
      'GET /api/v1/vulndb/kev listKnownExploitedVulnerabilities',
      'GET /api/v1/vulndb/stats getVulnerabilityStats',
      'GET /api/v1/vulndb/sync/{jobId} getVulnerabilitySyncJob',
      'POST /api/v1/vulndb/imports importVulnerabilityData',
      'POST /api/v1/vulndb/imports/{importId}/cancel cancelVulnerabilityImport',
      'POST /api/v1/vulndb/sync syncVulnerabilityData',
    ]);
    for (const { op } of operations) expect(Object.keys(op.responses ?? {})).toEqual(expect.arrayContaining(['400', '401']));
    expect(doc.paths['/api/v1/vulndb/sync'].post['x-permission']).toBe('platform:admin');
    expect(doc.paths['/api/v1/vulndb/imports'].post['x-permission']).toBe('platform:admin');
    expect(Object.keys(doc.paths['/api/v1/vulndb/imports'].post.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
  });
});
