#!/usr/bin/env node
// Regenerates the console screenshots in docs/images/ (shown in the README): a fresh service on a
// scratch embedded database, CloudMapper's demo AWS estate loaded (`controlgraph demo`) and audited,
// then the overview, findings, a finding's detail, the topology, a questionnaire drafted from a
// template, the questionnaire list and the POA&M board (items drafted from findings) in Chromium at
// 1440x900.
// Usage: npm run build && node scripts/web/screenshots.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, api, root, scratchDatabase, serviceEnv, signIn, startServer } from '../../bench/lib.js';
import { auditRun } from '../../bench/incremental-audit.js';
import { buildConsoleIfStale } from './build-console.mjs';
import { launchChromium } from './chromium.mjs';

const images = join(root, 'docs', 'images');

async function main() {
  await buildConsoleIfStale({ quiet: true });
  const database = await scratchDatabase('pglite');
  const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100' }));
  const scratch = mkdtempSync(join(tmpdir(), 'cg-shots-'));
  const browser = await launchChromium();
  try {
    const login = await signIn(server.base);
    const tokenFile = join(scratch, 'token');
    writeFileSync(tokenFile, login.token, { mode: 0o600 });
    execFileSync(process.execPath, [join(root, 'bin', 'controlgraph.js'), 'demo', '--tenant', login.tenant_id, '--server', server.base, '--token-file', tokenFile], {
      stdio: 'inherit',
    });
    const t = `/api/v1/tenants/${login.tenant_id}`;
    await auditRun(server.base, login.token, t);
    const first = await api(server.base, login.token, 'GET', `${t}/findings?per_page=1&severity=high`);
    const questionnaire = await api(server.base, login.token, 'POST', `${t}/questionnaires/from-template`, { template_id: 'fedramp-pe' });
    const highs = await api(server.base, login.token, 'GET', `${t}/findings?per_page=4&severity=high`);
    for (const [index, finding] of highs.items.entries()) {
      const item = await api(server.base, login.token, 'POST', `${t}/poam`, { finding_id: finding.id });
      if (index === 1) await api(server.base, login.token, 'PATCH', `${t}/poam/${item.id}/status`, { status: 'in_progress', comment: 'Fix scheduled.' });
    }

    const context = await browser.newContext({ baseURL: server.base, viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
    const answer = await context.request.post('/api/v1/auth/session', {
      data: { username: ADMIN.username, password: ADMIN.password },
      headers: { 'x-controlgraph-csrf': '1' },
    });
    if (!answer.ok()) throw new Error(`sign-in: ${answer.status()}`);
    const page = await context.newPage();
    const shots = [
      ['console-overview.png', '/'],
      ['console-findings.png', '/findings'],
      ['console-finding-detail.png', first.items[0] ? `/findings/${encodeURIComponent(first.items[0].id)}` : '/findings'],
      ['console-topology.png', '/topology'],
      ['console-questionnaires.png', '/questionnaires'],
      ['console-questionnaire.png', `/questionnaires/${questionnaire.id}`],
      ['console-poam.png', '/poam'],
    ];
    for (const [file, path] of shots) {
      await page.goto(path);
      await page.waitForLoadState('networkidle');
      // Charts and the graph layout settle after their data arrives.
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(images, file) });
      console.log(`wrote docs/images/${file}`);
    }
    await context.close();
  } finally {
    await browser.close();
    await server.stop();
    await database.drop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
