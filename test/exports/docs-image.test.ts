import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../harness/app.js';
import { buildTenant, call } from '../harness/identity.js';
import { projectPath } from '../../src/platform/paths.js';
import { provideAwsSdkModule } from '../../src/modules/discovery/aws.js';
import { recordedSdkModules, startS3Replay, useS3Replay } from './aws-recorded.js';
import { parseDrawio, pngSize } from './helpers.js';

/**
 * Renders the diagram of docs/exports.md from a real inventory: CloudMapper's demo account, read by
 * the aws discovery plugin from its recorded API responses, audited, then exported. Skipped unless
 * WRITE_DOCS_IMAGE=1; run it to refresh docs/images/ after a change to the renderer.
 */
describe.runIf(process.env.WRITE_DOCS_IMAGE === '1')('docs image', () => {
  it('writes docs/images/demo-account.png and .drawio', async () => {
    // The demo tenant reads with the service's own (replayed) credentials: the operator's grant.
    const t = await createTestApp({ env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: 'docs-demo' } });
    const s3 = await startS3Replay();
    const restore = useS3Replay(s3.endpoint);
    const modules = recordedSdkModules();
    for (const [pkg, mod] of Object.entries(modules)) provideAwsSdkModule(pkg, mod);
    try {
      const tenant = await buildTenant(t, { name: 'docs-demo' });
      await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/jobs`, payload: { name: 'demo', plugins: ['aws'], start: true }, expect: 201 });
      await t.drain();
      const png = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/topology/export/diagram`, expect: 200 });
      expect(pngSize(png.rawPayload).width).toBeGreaterThan(500);
      writeFileSync(projectPath('docs', 'images', 'demo-account.png'), png.rawPayload);
      const drawio = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/topology/export/drawio`, expect: 200 });
      expect(parseDrawio(drawio.body).diagrams).toBe(1);
      writeFileSync(projectPath('docs', 'images', 'demo-account.drawio'), drawio.body);
    } finally {
      for (const pkg of Object.keys(modules)) provideAwsSdkModule(pkg, null);
      restore();
      await s3.close();
      await t.close();
    }
  }, 300_000);
});
