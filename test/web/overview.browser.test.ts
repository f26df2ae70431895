import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';

const web = useConsole({ demo: true });

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

async function status() {
  const analyst = web.app.tenant.users['security-analyst'];
  const response = await call(web.app.t.app, analyst.token, { url: `/api/v1/tenants/${web.app.tenant.id}/controls/status?per_page=1`, expect: 200 });
  return response.json() as { overall_score: number; total_findings: number; by_severity: Record<string, number>; by_framework: Record<string, { score: number }> };
}

describe.runIf(chromiumPath())('the overview', () => {
  it('shows the scores and findings by severity the API reports, and the newest critical findings as links', async () => {
    const expected = await status();
    expect(expected.total_findings).toBeGreaterThan(0);
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.getByTestId('overall-score').waitFor();
    expect(await page.getByTestId('overall-score').textContent()).toContain(`${expected.overall_score} %`);
    for (const [framework, figures] of Object.entries(expected.by_framework)) {
      expect(await page.getByTestId(`framework-score-${framework}`).textContent()).toContain(`${figures.score} %`);
    }
    for (const severity of SEVERITIES) {
      const count = expected.by_severity[severity.toUpperCase()] ?? 0;
      expect(await page.getByTestId(`severity-count-${severity}`).textContent()).toBe(count.toLocaleString('en-US'));
    }
    await expect.poll(() => page.getByTestId('last-run-Audit').isVisible()).toBe(true);
    expect(await page.getByTestId('last-run-Audit').textContent()).toContain('Succeeded');
    const critical = page.getByRole('table', { name: 'The newest open critical findings' });
    if ((expected.by_severity.CRITICAL ?? 0) > 0) {
      await critical.waitFor();
      const href = await critical.getByRole('link').first().getAttribute('href');
      expect(href).toMatch(/^\/findings\/.+/);
    }
    // The charts read as labelled images.
    expect(await page.getByRole('img', { name: 'Active findings by severity' }).count()).toBe(1);
    await page.screenshot({ path: '/tmp/overview.png', fullPage: true });
    await expectAccessible(page);
    await context.close();
  }, 240_000);

  it('runs an audit and follows it live to its end and its counts', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.getByRole('button', { name: 'Run audit' }).click();
    await page.waitForURL((url) => url.searchParams.has('run'));
    await page.getByRole('progressbar', { name: 'Audit progress' }).waitFor();
    await expect.poll(() => page.getByTestId('audit-run-state').textContent(), { timeout: 180_000 }).toBe('Audit finished');
    expect(await page.getByRole('progressbar', { name: 'Audit progress' }).getAttribute('aria-valuenow')).toBe('100');
    await page.getByText('New findings').waitFor();
    await page.screenshot({ path: '/tmp/overview-audit.png', fullPage: true });
    await expectAccessible(page);
    await context.close();
  }, 240_000);

  it('offers a read-only user no Run audit action', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.getByTestId('overall-score').waitFor();
    expect(await page.getByRole('button', { name: 'Run audit' }).count()).toBe(0);
    await expectAccessible(page);
    await context.close();
  }, 240_000);
});
