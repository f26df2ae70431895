import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

const web = useConsole({ demo: true });

interface FindingRow {
  id: string;
  title: string;
  severity: string;
  status: string;
}

/** Each test signs in, loads lazy pages and runs axe on a machine shared with other suites. */
const TIMEOUT = 180_000;
const CSRF = { 'x-controlgraph-csrf': '1' };
const path = (id: string) => `/findings/${encodeURIComponent(id)}`;

/** The API as the signed-in page sees it (the context's cookies). */
async function getJson<T>(page: Page, url: string): Promise<T> {
  const response = await page.request.get(`${web.app.base}${url}`);
  expect(response.status(), url).toBe(200);
  return (await response.json()) as T;
}

const tenantPath = () => `/api/v1/tenants/${web.app.tenant.id}`;
const openFindings = (page: Page) => getJson<{ items: FindingRow[]; total: number }>(page, `${tenantPath()}/findings?status=open&per_page=500`);
/** Active findings as the compliance score counts them (open, not covered by a live acceptance). */
async function activeCount(page: Page): Promise<number> {
  const status = await getJson<{ by_severity: Record<string, number> }>(page, `${tenantPath()}/controls/status`);
  return Object.values(status.by_severity).reduce((sum, count) => sum + count, 0);
}
/** expect.poll with room for a loaded machine (lazy pages, queries one after another). */
const until = <T>(fn: () => Promise<T> | T, options: { timeout?: number } = {}) => expect.poll(fn, { timeout: 20_000, ...options });
const totalText = (page: Page) => page.getByText(/ in all$/).textContent();

describe.runIf(chromiumPath())('the findings screens', () => {
  it(
    'loads cold with its chunks and the session named in the page, asking for the session once',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      // The shell's script is held until the page's chunk and the session have been asked for: only
      // what index.html names can be asked for before the shell runs.
      const asked = new Set<string>();
      page.on('request', (request) => asked.add(new URL(request.url()).pathname.replace(/-[\w-]+\.js$/, '.js')));
      const askedEarly = () => asked.has('/assets/FindingsPage.js') && asked.has('/api/v1/auth/me');
      let beforeShell: boolean | null = null;
      await page.route(/\/assets\/index-[\w-]+\.js$/, async (route) => {
        await expect
          .poll(askedEarly, { timeout: 10_000 })
          .toBe(true)
          .catch(() => undefined);
        beforeShell = askedEarly();
        await route.continue();
      });
      await page.goto('/findings');
      await page.locator('table tbody tr').first().waitFor({ timeout: 20_000 });
      expect(beforeShell).toBe(true);
      // Resource timing names who asked: 'link' for the session index.html preloads ('fetch' had the
      // console asked again).
      const session = await page.evaluate(() =>
        performance
          .getEntriesByType('resource')
          .filter((entry) => new URL(entry.name).pathname === '/api/v1/auth/me')
          .map((entry) => (entry as unknown as { initiatorType: string }).initiatorType),
      );
      expect(session).toEqual(['link']);
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'filters the list through the URL and passes the accessibility check',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      await page.goto('/findings');
      await page.getByRole('heading', { level: 1, name: 'Findings' }).waitFor({ timeout: 20_000 });
      const open = await openFindings(page);
      expect(open.total).toBeGreaterThan(0);
      await until(() => totalText(page)).toBe(`${open.total} in all`);

      const high = open.items.filter((finding) => finding.severity === 'HIGH').length;
      expect(high).toBeGreaterThan(0);
      // The pills wrapper takes the click for the input inside it.
      await page.getByRole('combobox', { name: 'Severity' }).click({ force: true });
      await page.getByRole('option', { name: 'High' }).click();
      await page.keyboard.press('Escape');
      await page.waitForURL((url) => url.searchParams.get('severity') === 'high');
      await until(() => totalText(page)).toBe(`${high} in all`);
      const badges = await page.locator('tbody tr td:nth-child(2)').allTextContents();
      expect(badges.length).toBe(Math.min(high, 50));
      expect(new Set(badges)).toEqual(new Set(['High']));

      // The live counter is connected (EventSource on /findings/stream).
      await until(() => page.getByTestId('live-counter').textContent(), { timeout: 15_000 }).toContain('no changes since you opened');
      await expectAccessible(page);
      await page.screenshot({ path: '/tmp/findings-list.png', fullPage: true });

      await context.close();
    },
    TIMEOUT,
  );

  it(
    'sorts through the URL and shows the scored and grouped views',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      await page.goto('/findings?severity=high');
      await page.getByRole('heading', { level: 1, name: 'Findings' }).waitFor({ timeout: 20_000 });
      // Sort lands in the URL too.
      await page.getByRole('button', { name: /^Last seen/ }).click();
      await page.waitForURL((url) => url.searchParams.get('sort') === 'last_seen');

      await page.getByRole('tab', { name: 'By risk score' }).click();
      await page.waitForURL((url) => url.searchParams.get('view') === 'scored' && url.searchParams.get('severity') === 'high');
      await page.getByRole('columnheader', { name: 'Risk score' }).waitFor({ timeout: 20_000 });
      await page
        .getByText(/exposure/)
        .first()
        .waitFor({ timeout: 20_000 });
      await expectAccessible(page);

      await page.getByRole('tab', { name: 'By root cause' }).click();
      await page.waitForURL((url) => url.searchParams.get('view') === 'grouped');
      await page.getByRole('columnheader', { name: 'Root cause' }).waitFor({ timeout: 20_000 });
      await expectAccessible(page);
      // A group leads to its findings.
      await page
        .getByRole('button', { name: /^Findings of / })
        .first()
        .click();
      await page.waitForURL((url) => url.searchParams.get('group_id') !== null && url.searchParams.get('view') === null);
      await page.getByText(/Showing the findings of group/).waitFor({ timeout: 20_000 });
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'accepts the risk of a finding (it leaves the open list, the score counts it no more), revokes it, and resolves another',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      const before = await openFindings(page);
      const activeBefore = await activeCount(page);
      const [target, other] = before.items;
      if (!target || !other) throw new Error('the demo estate has fewer than two open findings');

      await page.goto('/findings');
      await page.getByRole('link', { name: target.title }).first().click();
      await page.waitForURL((url) => url.pathname.startsWith('/findings/'));
      const detailUrl = page.url();
      // The demo rows may share a title; the detail opened is the one addressed in the URL.
      const opened = decodeURIComponent(new URL(detailUrl).pathname.slice('/findings/'.length));
      await page.getByRole('heading', { level: 1, name: target.title }).waitFor({ timeout: 20_000 });
      await page.getByRole('heading', { name: 'Remediation' }).waitFor({ timeout: 20_000 });

      await page.getByRole('button', { name: 'Accept risk' }).click();
      const dialog = page.getByRole('dialog', { name: 'Accept the risk' });
      await dialog.getByText(/At most 365 days from today/).waitFor({ timeout: 20_000 });
      await dialog.getByLabel(/^Reason/).fill('compensating control: WAF in front');
      // Beyond 365 days: refused here before the API is asked.
      const tooFar = new Date(Date.now() + 400 * 86_400_000).toISOString().slice(0, 10);
      await dialog.getByLabel(/^Expires on/).fill(tooFar);
      await dialog.getByRole('button', { name: 'Accept risk' }).click();
      await dialog.getByText(/At most 365 days out: pick/).waitFor({ timeout: 20_000 });
      const inMonth = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      await dialog.getByLabel(/^Expires on/).fill(inMonth);
      await dialog.getByRole('button', { name: 'Accept risk' }).click();
      await page.getByText('Risk accepted for this finding').waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Revoke acceptance' }).waitFor({ timeout: 20_000 });

      // Out of the open list, and out of the score's count.
      const afterAccept = await openFindings(page);
      expect(afterAccept.total).toBe(before.total - 1);
      expect(afterAccept.items.map((finding) => finding.id)).not.toContain(opened);
      expect(await activeCount(page)).toBe(activeBefore - 1);
      await page.goto('/findings');
      await until(() => totalText(page)).toBe(`${before.total - 1} in all`);

      // Revoked: open again.
      await page.goto(detailUrl);
      await page.getByRole('button', { name: 'Revoke acceptance' }).click();
      await page.getByText('Acceptance revoked').waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Accept risk' }).waitFor({ timeout: 20_000 });
      expect((await openFindings(page)).total).toBe(before.total);
      expect(await activeCount(page)).toBe(activeBefore);

      // Resolve another one.
      const second = before.items.find((finding) => finding.id !== opened)!;
      await page.goto(path(second.id));
      await page.getByRole('button', { name: 'Resolve' }).click();
      await page.getByText('Finding resolved').waitFor({ timeout: 20_000 });
      await until(() => page.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
      const resolved = await getJson<FindingRow>(page, `${tenantPath()}/findings/${encodeURIComponent(second.id)}`);
      expect(resolved.status).toBe('resolved');
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "shows the API's refusal of an acceptance in the form",
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      const finding = (await openFindings(page)).items.at(-1)!;
      await page.goto(path(finding.id));
      await page.getByRole('button', { name: 'Accept risk' }).waitFor({ timeout: 20_000 });
      // Someone else accepts it meanwhile; this page still offers the action.
      const expiresAt = new Date(Date.now() + 10 * 86_400_000).toISOString();
      const elsewhere = await page.request.post(`${web.app.base}${tenantPath()}/findings/${encodeURIComponent(finding.id)}/accept`, {
        headers: CSRF,
        data: { owner: 'someone', reason: 'accepted elsewhere', expires_at: expiresAt },
      });
      expect(elsewhere.status()).toBe(201);
      await page.getByRole('button', { name: 'Accept risk' }).click();
      const dialog = page.getByRole('dialog', { name: 'Accept the risk' });
      await dialog.getByLabel(/^Reason/).fill('also accepted here');
      await dialog.getByRole('button', { name: 'Accept risk' }).click();
      const refusal = dialog.getByRole('alert');
      await refusal.waitFor({ timeout: 20_000 });
      expect(await refusal.textContent()).toMatch(/^The service refused the acceptance.*already/i);
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'resolves selected findings in bulk and the live counter sees them go',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      const before = await openFindings(page);
      await page.goto('/findings');
      await until(() => page.getByTestId('live-counter').textContent(), { timeout: 15_000 }).toContain('no changes since you opened');
      const boxes = page.getByRole('checkbox', { name: /^Select row / });
      await boxes.nth(0).check();
      await boxes.nth(1).check();
      await page.getByText('2 findings selected').waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Resolve selected' }).click();
      await page.getByText('2 findings resolved').waitFor({ timeout: 20_000 });
      await until(() => totalText(page)).toBe(`${before.total - 2} in all`);
      await until(() => page.getByTestId('live-counter').textContent(), { timeout: 20_000 }).toContain('0 new and 2 resolved findings since you opened this list');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await until(() => page.getByTestId('live-counter').textContent()).toContain('no changes');
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'shows the Terraform patch as a diff with a download, and the detail passes the accessibility check',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      const open = await openFindings(page);
      let withPatch: FindingRow | undefined;
      for (const finding of open.items) {
        const remediation = await getJson<{ terraform_patch_available: boolean }>(page, `${tenantPath()}/findings/${encodeURIComponent(finding.id)}/remediation`);
        if (remediation.terraform_patch_available) {
          withPatch = finding;
          break;
        }
      }
      if (!withPatch) throw new Error('no demo finding has a Terraform patch');
      const patch = await getJson<{ patch: string }>(page, `${tenantPath()}/findings/${encodeURIComponent(withPatch.id)}/terraform-patch`);

      await page.goto(path(withPatch.id));
      const diff = page.getByRole('region', { name: 'Terraform patch (unified diff)' });
      await diff.waitFor({ timeout: 20_000 });
      const added = patch.patch.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).length;
      expect(added).toBeGreaterThan(0);
      expect(await diff.locator('[data-diff="add"]').count()).toBe(added);
      // Remediation commands come with a copy button.
      await until(() => page.getByRole('button', { name: 'Copy' }).count()).toBeGreaterThan(0);

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download patch' }).click()]);
      expect(download.suggestedFilename()).toMatch(/\.patch$/);
      await expectAccessible(page);
      await page.screenshot({ path: '/tmp/finding-detail.png', fullPage: true });
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'a read-only user sees no write action, and the API refuses one forced through',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
      const open = await openFindings(page);
      const finding = open.items[0]!;
      await page.goto('/findings');
      await until(() => totalText(page)).toBe(`${open.total} in all`);
      expect(await page.getByRole('checkbox').count()).toBe(0);
      await page.getByRole('tab', { name: 'By root cause' }).click();
      await until(() => page.getByRole('button', { name: /^Findings of / }).count()).toBeGreaterThan(0);
      expect(await page.getByRole('button', { name: /^Accept the risk of / }).count()).toBe(0);

      await page.goto(path(finding.id));
      await page.getByRole('heading', { name: 'Remediation' }).waitFor({ timeout: 20_000 });
      for (const name of ['Resolve', 'Accept risk', 'Create POA&M item']) expect(await page.getByRole('button', { name }).count()).toBe(0);
      await expectAccessible(page);

      const forced = await page.request.post(`${web.app.base}${tenantPath()}/findings/${encodeURIComponent(finding.id)}/resolve`, { headers: CSRF, data: {} });
      expect(forced.status()).toBe(403);
      await context.close();
    },
    TIMEOUT,
  );

  // Last: its audit reopens every finding the tests above resolved.
  it(
    'shows in the history when a resolved finding was reopened by a later audit',
    async () => {
      const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
      const finding = (await openFindings(page)).items[0]!;
      const url = `${tenantPath()}/findings/${encodeURIComponent(finding.id)}`;
      await page.goto(path(finding.id));
      const history = page.locator('section', { has: page.getByRole('heading', { name: 'History' }) });
      await history.waitFor({ timeout: 20_000 });
      await until(() => history.getByText('Reopened', { exact: true }).locator('xpath=following-sibling::dd').textContent()).toBe('—');

      const resolved = await page.request.post(`${web.app.base}${url}/resolve`, { headers: CSRF, data: {} });
      expect(resolved.status()).toBe(200);
      // The reopening happens a few minutes after the resolution, by the service's clock.
      web.app.t.clock.advance(5 * 60_000);
      const started = await page.request.post(`${web.app.base}${tenantPath()}/findings/run`, { headers: CSRF, data: {} });
      expect(started.status()).toBe(202);
      const runUrl = `${tenantPath()}/findings/runs/${((await started.json()) as { job_id: string }).job_id}`;
      await until(async () => (await getJson<{ status: string }>(page, runUrl)).status, { timeout: 60_000 }).toBe('succeeded');
      const reopened = await getJson<{ status: string; reopened_at: string | null; reopen_count: number }>(page, url);
      expect(reopened).toMatchObject({ status: 'open', reopened_at: web.app.t.clock.now().toISOString(), reopen_count: 1 });

      await page.reload();
      await history.waitFor({ timeout: 20_000 });
      const shown = await page.evaluate((iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)), reopened.reopened_at!);
      await until(() => history.getByText('Reopened', { exact: true }).locator('xpath=following-sibling::dd').textContent()).toBe(`${shown} (once)`);
      await expectAccessible(page);
      await page.screenshot({ path: '/tmp/finding-reopened.png', fullPage: true });
      await context.close();
    },
    TIMEOUT,
  );
});
