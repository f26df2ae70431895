import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';

const web = useConsole({ demo: true });

const api = (path: string) => `/api/v1/tenants/${web.app.tenant.id}${path}`;
const analystToken = () => web.app.tenant.users['security-analyst'].token;

describe.runIf(chromiumPath())('the controls and risk acceptance screens', () => {
  it("lists a framework's failing controls with links to their findings, and the gaps", async () => {
    const status = (await call(web.app.t.app, analystToken(), { url: api('/controls/status?per_page=1'), expect: 200 })).json();
    const framework = Object.keys(status.by_framework)[0]!;
    const failing = (await call(web.app.t.app, analystToken(), { url: api(`/controls/status?framework=${framework}&automated_state=failing&per_page=50`), expect: 200 })).json();
    expect(failing.controls.total).toBeGreaterThan(0);

    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto(`/controls?framework=${framework}&state=failing`);
    const table = page.getByRole('table', { name: 'Applicable controls and their state' });
    await table.waitFor();
    await expect.poll(() => table.getByRole('row').count()).toBe(failing.controls.items.length + 1);
    expect(await table.getByText('Failing', { exact: true }).count()).toBe(failing.controls.items.length);
    const first = failing.controls.items[0];
    const link = table.getByRole('link', { name: `Findings of ${framework} ${first.control_id}`, exact: true });
    expect(await link.getAttribute('href')).toBe(`/findings?${new URLSearchParams({ control_id: first.control_id, framework }).toString()}`);
    expect(await page.getByTestId('framework-summary').textContent()).toContain(`${status.by_framework[framework].failing_controls} failing`);
    await page.screenshot({ path: '/tmp/controls.png', fullPage: true });
    await expectAccessible(page);

    // The gaps view, from its tab; the framework stays chosen.
    const gaps = (await call(web.app.t.app, analystToken(), { url: api(`/controls/gaps?framework=${framework}&per_page=50`), expect: 200 })).json();
    await page.getByRole('tab', { name: 'Gaps' }).click();
    await page.waitForURL((url) => url.searchParams.get('tab') === 'gaps' && url.searchParams.get('framework') === framework);
    const gapsTable = page.getByRole('table', { name: 'Controls that do not pass' });
    await gapsTable.waitFor();
    await expect.poll(() => gapsTable.getByRole('row').count()).toBe(gaps.items.length + 1);
    await page.screenshot({ path: '/tmp/controls-gaps.png', fullPage: true });
    await expectAccessible(page);
    // Enabling frameworks takes tenant:update, which an analyst lacks.
    expect(await page.getByRole('tab', { name: 'Frameworks' }).count()).toBe(0);
    await context.close();
  }, 240_000);

  it('lets a tenant admin enable and disable frameworks', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['tenant-admin'].username);
    await page.goto('/controls?tab=settings');
    const switches = page.getByRole('switch');
    await switches.first().waitFor();
    const settings = (await call(web.app.t.app, web.app.tenant.admin.token, { url: api('/settings/compliance'), expect: 200 })).json();
    expect(await switches.count()).toBe(settings.frameworks.length);
    const off = settings.frameworks.find((framework: { enabled: boolean }) => !framework.enabled) ?? settings.frameworks[0];
    await page.getByRole('switch', { name: `Enable ${off.name}` }).click({ force: true });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Frameworks saved.').waitFor();
    const after = (await call(web.app.t.app, web.app.tenant.admin.token, { url: api('/settings/compliance'), expect: 200 })).json();
    expect(after.frameworks.find((framework: { id: string }) => framework.id === off.id).enabled).toBe(!off.enabled);
    await expectAccessible(page);
    await context.close();
  }, 240_000);

  it('lists risk acceptances with their counts, shows one with its snapshot, and revokes it', async () => {
    const findings = (await call(web.app.t.app, analystToken(), { url: api('/findings?per_page=1&sort=-severity'), expect: 200 })).json();
    const finding = findings.items[0];
    const expiresAt = new Date(Date.now() + 20 * 86_400_000).toISOString();
    const accepted = (
      await call(web.app.t.app, analystToken(), {
        method: 'POST',
        url: api(`/findings/${encodeURIComponent(finding.id)}/accept`),
        payload: { reason: 'compensating control in place', owner: 'platform team', expires_at: expiresAt },
        expect: 201,
      })
    ).json();

    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto('/risk-acceptances');
    await expect.poll(() => page.getByTestId('count-total').textContent()).toBe('1');
    expect(await page.getByTestId('count-active').textContent()).toBe('1');
    expect(await page.getByTestId('count-revoked').textContent()).toBe('0');
    await page.screenshot({ path: '/tmp/risk.png', fullPage: true });
    await expectAccessible(page);

    // The revoked filter shows none yet.
    await page.getByRole('button', { name: /^Show Revoked acceptances/ }).click();
    await page.waitForURL((url) => url.searchParams.get('state') === 'revoked');
    await page.getByText('No risk acceptance matches these filters.').waitFor();
    await page.getByRole('button', { name: /^Show all acceptances/ }).click();

    await page.getByRole('link', { name: finding.id, exact: true }).click();
    await page.waitForURL(`**/risk-acceptances/${accepted.id}`);
    await page.getByRole('heading', { name: 'Snapshot when accepted' }).waitFor();
    expect(await page.getByText('compensating control in place').isVisible()).toBe(true);
    const snapshotLink = page.getByRole('region', { name: 'Snapshot when accepted' }).getByRole('link', { name: finding.id, exact: true });
    expect(await snapshotLink.getAttribute('href')).toBe(`/findings/${encodeURIComponent(finding.id)}`);
    await page.screenshot({ path: '/tmp/risk-detail.png', fullPage: true });
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog', { name: 'Revoke this risk acceptance?' }).getByRole('button', { name: 'Revoke acceptance' }).click();
    await page.getByText('The acceptance is revoked.').waitFor();
    await expect.poll(() => page.getByText('Revoked', { exact: true }).first().isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    const one = (await call(web.app.t.app, analystToken(), { url: api(`/risk-acceptances/${accepted.id}`), expect: 200 })).json();
    expect(one.state).toBe('revoked');

    await page.getByRole('link', { name: 'All risk acceptances' }).click();
    await expect.poll(() => page.getByTestId('count-revoked').textContent()).toBe('1');
    expect(await page.getByTestId('count-active').textContent()).toBe('0');
    await context.close();
  }, 240_000);

  it('shows a read-only user no revoke and no framework settings', async () => {
    const findings = (await call(web.app.t.app, analystToken(), { url: api('/findings?per_page=1&sort=-severity'), expect: 200 })).json();
    const accepted = (
      await call(web.app.t.app, analystToken(), {
        method: 'POST',
        url: api(`/findings/${encodeURIComponent(findings.items[0].id)}/accept`),
        payload: { reason: 'accepted for the read-only check', owner: 'ops', expires_at: new Date(Date.now() + 10 * 86_400_000).toISOString() },
        expect: 201,
      })
    ).json();
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.goto(`/risk-acceptances/${accepted.id}`);
    await page.getByText('accepted for the read-only check').waitFor();
    expect(await page.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    await expectAccessible(page);
    await page.goto('/controls?tab=settings');
    await page.getByRole('table', { name: 'Applicable controls and their state' }).waitFor();
    expect(await page.getByRole('tab', { name: 'Frameworks' }).count()).toBe(0);
    expect(await page.getByRole('switch').count()).toBe(0);
    await context.close();
  }, 240_000);
});
