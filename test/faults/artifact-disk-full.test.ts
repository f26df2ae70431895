import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { audit, events, fixtureNode, fixtures } from '../harness/compliance.js';
import { assertNoFaultDamage } from '../harness/fault-checks.js';
import { smallDisk, type SmallDisk } from '../harness/small-disk.js';

/**
 * Fault: the artifact store's disk fills up. The store is a 2 MiB tmpfs (mounted directly as root, as
 * on the CI machine, else inside an unprivileged user namespace: see small-disk.ts), filled to the
 * brim before an export and a report. Each fails as a job with a reason (the report announces it
 * with report.failed, once), leaves no partial file, the service stays healthy, nothing is left
 * running past its lease, and once space is back both succeed without a restart. Where no small file
 * system can be made at all, the test is skipped and says why.
 */
describe('fault: the artifact store runs out of space', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let disk: SmallDisk | { unavailable: string };
  let store = '';
  let filler = '';

  beforeAll(async () => {
    // 2 MiB: once space is back, the draw.io export of six nodes per built-in rule (about 0.8 MB at 112
    // rules) and the PDF report must both fit.
    disk = await smallDisk('2m');
    if (!('path' in disk)) {
      console.warn(`artifact-disk-full: no small file system here, the disk-full fault is not exercised (${disk.unavailable})`);
      return;
    }
    store = disk.path;
    filler = join(store, 'filler');
    t = await createTestApp({ artifactStore: `file://${store}` });
    tenant = await buildTenant(t);
    const nodes = [...fixtures.keys()].flatMap((ruleId, r) =>
      Array.from({ length: 6 }, (_, i) => ({ ...fixtureNode(ruleId, 'violating', `full-${r}-${i}`), name: `resource ${r} ${i} ${'x'.repeat(40)}` })),
    );
    await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: { nodes }, expect: 201 });
    // Findings (and their events) for the report to show.
    await audit(t, tenant.admin.token, tenant.id);
  });

  afterAll(async () => {
    await t?.close();
    if (disk && 'path' in disk) await disk.release();
  });

  function fill() {
    // Writes until the file system refuses: nothing is left for the export.
    try {
      writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
    } catch {
      // ENOSPC once full: what we want
    }
  }

  async function exportStatus(jobId: string) {
    return (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/exports/${jobId}`, expect: 200 })).json();
  }
  async function reportStatus(id: string) {
    return (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/reports/${id}`, expect: 200 })).json();
  }
  const startExport = async () =>
    (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/exports`, payload: { kind: 'drawio' }, expect: 202 })).json();
  const startReport = async () =>
    (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/reports/generate`, payload: { format: 'pdf' }, expect: 202 })).json();

  it('fails the export and the report with a reason, keeps no partial file, stays healthy, and recovers once space is back', async (ctx) => {
    if (!('path' in disk)) return ctx.skip(`no small file system for the artifact store here (${disk.unavailable})`);
    await ctx.annotate(`artifact store on ${disk.how}`);
    fill();
    const started = await startExport();
    const report = await startReport();
    // Every attempt the queue grants runs into the full disk.
    for (let round = 0; round < 5; round++) {
      await t.drain();
      t.clock.advance(10 * 60_000);
    }
    const failed = await exportStatus(started.job_id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/space|ENOSPC|full/i);
    const failedReport = await reportStatus(report.id);
    expect(failedReport).toMatchObject({ status: 'failed', attempts: 3 });
    expect(failedReport.error).toMatch(/space|ENOSPC|full/i);
    // Announced once, for the last attempt only.
    expect((await events(t, tenant.id, 'report.failed')).map((e) => (e.data as any).report.id)).toEqual([report.id]);
    const files = readdirSync(store, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'filler');
    expect(
      files.map((e) => e.name),
      'no partial export or report file left behind',
    ).toEqual([]);
    await assertNoFaultDamage(t.deps.database.db, tenant.id, { now: t.clock.now(), health: t.app });

    rmSync(filler, { force: true });
    const again = await startExport();
    const reportAgain = await startReport();
    await t.drain();
    const done = await exportStatus(again.job_id);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(done.size_bytes).toBeGreaterThan(0);
    const download = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/exports/${again.job_id}/download`, expect: 200 });
    expect(download.body).toMatch(/^<\?xml|<mxfile/);
    expect(await reportStatus(reportAgain.id)).toMatchObject({ status: 'succeeded' });
    expect((await events(t, tenant.id, 'report.generated')).map((e) => (e.data as any).report.id)).toEqual([reportAgain.id]);
    await assertNoFaultDamage(t.deps.database.db, tenant.id, { now: t.clock.now(), health: t.app });
  }, 300_000);
});
