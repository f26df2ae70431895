import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { fixtureNode, fixtures } from '../harness/compliance.js';

/**
 * Fault: the artifact store's disk fills up. The store is a 1 MiB tmpfs (mounting needs root, as on
 * the CI machine; elsewhere the test says so and is skipped), filled to the brim before an export.
 * The export fails as a job with a reason, leaves no partial file, the service stays healthy, and once
 * space is back the export succeeds without a restart.
 */
function mountTmpfs(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

const mountPoint = mkdtempSync(join(tmpdir(), 'cg-full-'));
const mounted = mountTmpfs(mountPoint);
if (!mounted) console.warn('artifact-disk-full: cannot mount a tmpfs here (needs root); the disk-full fault is not exercised');

describe.runIf(mounted)('fault: the artifact store runs out of space', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  const filler = join(mountPoint, 'filler');

  beforeAll(async () => {
    t = await createTestApp({ artifactStore: `file://${mountPoint}` });
    tenant = await buildTenant(t);
    const nodes = [...fixtures.keys()].flatMap((ruleId, r) => Array.from({ length: 6 }, (_, i) => ({ ...fixtureNode(ruleId, 'violating', `full-${r}-${i}`), name: `resource ${r} ${i} ${'x'.repeat(40)}` })));
    await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: { nodes }, expect: 201 });
  });

  afterAll(async () => {
    await t?.close();
    execFileSync('umount', [mountPoint], { stdio: 'pipe' });
    rmSync(mountPoint, { recursive: true, force: true });
  });

  function fill() {
    // Writes until the file system refuses: nothing is left for the export.
    try {
      writeFileSync(filler, Buffer.alloc(2 * 1024 * 1024));
    } catch {
      // ENOSPC once full: what we want
    }
  }

  async function exportStatus(jobId: string) {
    return (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/exports/${jobId}`, expect: 200 })).json();
  }

  it('fails the export with a reason, keeps no partial file, stays healthy, and recovers once space is back', async () => {
    fill();
    const started = (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/exports`, payload: { kind: 'drawio' }, expect: 202 })).json();
    // Every attempt the queue grants runs into the full disk.
    for (let round = 0; round < 5; round++) {
      await t.drain();
      t.clock.advance(10 * 60_000);
    }
    const failed = await exportStatus(started.job_id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/space|ENOSPC|full/i);
    const files = readdirSync(mountPoint, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'filler');
    expect(files.map((e) => e.name), 'no partial export file left behind').toEqual([]);
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);

    rmSync(filler, { force: true });
    const again = (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/exports`, payload: { kind: 'drawio' }, expect: 202 })).json();
    await t.drain();
    const done = await exportStatus(again.job_id);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(done.size_bytes).toBeGreaterThan(0);
    const download = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/exports/${again.job_id}/download`, expect: 200 });
    expect(download.body).toMatch(/^<\?xml|<mxfile/);
  }, 300_000);
});
