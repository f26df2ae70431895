import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh } from '../harness/identity.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { provideAwsSdkModule } from '../../src/modules/discovery/aws.js';
import { buildReport, sendReport } from '../agents/helpers.js';
import { recordedSdkModules, startS3Replay, useS3Replay } from './aws-recorded.js';
import { pdfAllText } from './pdf-text.js';

/**
 * Renders the example report of docs/exports.md: CloudMapper's demo account (read by the aws
 * discovery plugin from its recorded responses), a host reporting through the agent, and a bucket
 * and a database named in Chinese and Greek, and in Cyrillic, added a day later; audited after each
 * step (the score history's points), then reported. Writes
 * docs/images/compliance-report.pdf and PNGs of its first page and its sign-off page (pdftoppm,
 * Debian's poppler-utils). Skipped unless WRITE_DOCS_IMAGE=1.
 */
describe.runIf(process.env.WRITE_DOCS_IMAGE === '1')('docs report image', () => {
  it('writes docs/images/compliance-report.pdf and its pages as PNG', async () => {
    const t = await createTestApp({ env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: 'docs-report' } });
    const s3 = await startS3Replay();
    const restore = useS3Replay(s3.endpoint);
    const modules = recordedSdkModules();
    for (const [pkg, mod] of Object.entries(modules)) provideAwsSdkModule(pkg, mod);
    const work = mkdtempSync(join(tmpdir(), 'docs-report-'));
    try {
      const tenant = await buildTenant(t, { name: 'docs-report' });
      let admin = tenant.admin;
      const url = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
      await call(t.app, admin.token, { method: 'POST', url: url('/jobs'), payload: { name: 'demo', plugins: ['aws'], start: true }, expect: 201 });
      await t.drain();
      await audit(t, admin.token, tenant.id);
      // A day later: a host reports through the agent, two resources named in other scripts appear.
      t.clock.advance(86_400_000);
      admin = await fresh(t, admin);
      for (const node of [
        { ...fixtureNode('aws-s3-bucket-versioning', 'violating', 'datalake-prod'), name: '数据湖-生产 Ελληνικά' },
        { ...fixtureNode('aws-rds-instance-backup-enabled', 'violating', 'orders-db'), name: 'Продакшн-база-данных' },
      ]) {
        await call(t.app, admin.token, { method: 'POST', url: url('/nodes'), payload: node, expect: 201 });
      }
      const key = (await createApiKey(t, { ...tenant, admin }, { permissions: ['agents:write'] })).key;
      const host = buildReport({
        agent_id: 'agent-web-1',
        config_checks: [
          { id: 'sshd.permit_root_login', value: 'yes', source: '/etc/ssh/sshd_config:33' },
          { id: 'sshd.permit_empty_passwords', value: 'no', source: 'default' },
        ],
      });
      expect((await sendReport(t, key, 'agent-web-1', host)).statusCode).toBe(200);
      t.clock.advance(86_400_000);
      admin = await fresh(t, admin);
      await audit(t, admin.token, tenant.id);
      t.clock.advance(3_600_000);
      admin = await fresh(t, admin);

      const queued = (await call(t.app, admin.token, { method: 'POST', url: url('/reports/generate'), payload: { format: 'pdf' }, expect: 202 })).json();
      await t.drain();
      const done = (await call(t.app, admin.token, { url: queued.status_url, expect: 200 })).json();
      const pdf = (await call(t.app, admin.token, { url: done.download_url, expect: 200 })).rawPayload;
      expect(await pdfAllText(pdf)).toContain('数据湖-生产 Ελληνικά');
      writeFileSync(projectPath('docs', 'images', 'compliance-report.pdf'), pdf);

      // The first page (summary, charts) and the last (sign-off), at 80 dpi.
      const file = join(work, 'report.pdf');
      writeFileSync(file, pdf);
      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))![1]);
      for (const [page, name] of [
        [1, 'compliance-report-page-1.png'],
        [pages, 'compliance-report-sign-off.png'],
      ] as const) {
        const prefix = join(work, `page-${page}`);
        execFileSync('pdftoppm', ['-r', '80', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, prefix]);
        writeFileSync(projectPath('docs', 'images', name), readFileSync(`${prefix}.png`));
      }
    } finally {
      for (const pkg of Object.keys(modules)) provideAwsSdkModule(pkg, null);
      restore();
      await s3.close();
      await t.close();
      rmSync(work, { recursive: true, force: true });
    }
  }, 300_000);
});
