import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

const web = useConsole();

/** Picks an option of a Mantine Select by its label. */
async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label, { exact: true }).filter({ visible: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe.runIf(chromiumPath())('administration screens', () => {
  it('a tenant-admin creates an API key whose value is shown once, with a copy button', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['tenant-admin'].username);
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.waitForURL(/\/admin\/users$/);
    await page.getByRole('tab', { name: 'API keys' }).click();
    await page.waitForURL(/\/admin\/api-keys$/);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('ci pipeline');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'API key “ci pipeline” created' });
    await dialog.waitFor();
    const value = (await dialog.getByLabel('API key value').textContent())!.trim();
    expect(value.length).toBeGreaterThan(20);
    await expect.poll(() => dialog.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-api-key-created.png' });
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // The list shows the key by its prefix only; the value is nowhere on the page any more.
    await page.getByRole('cell', { name: 'ci pipeline', exact: true }).waitFor();
    expect(await page.content()).not.toContain(value);
    await page.reload();
    await page.getByRole('cell', { name: 'ci pipeline', exact: true }).waitFor();
    expect(await page.content()).not.toContain(value);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-api-keys.png', fullPage: true });
    await context.close();
  });

  it('creates a user, changes a role, and shows the guard rail when an admin changes its own role', { timeout: 180_000 }, async () => {
    const admin = web.app.tenant.users['tenant-admin'];
    const { context, page } = await signIn(web.browser, web.app, admin.username);
    await page.goto('/admin/users');
    const username = `new-auditor-${process.pid}`;
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill(username);
    await page.getByLabel('Password', { exact: true }).fill('a-long-enough-password-1');
    await choose(page, 'Role', 'auditor');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.getByRole('cell', { name: username, exact: true }).waitFor();

    await choose(page, `Role of ${username}`, 'security-analyst');
    await expect.poll(() => page.getByText(`${username} is now security-analyst.`).isVisible()).toBe(true);

    // The service's guard rail, in its own words.
    await choose(page, `Role of ${admin.username}`, 'auditor');
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'The role was not changed' }).textContent()).toContain('cannot change your own role');
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-users.png', fullPage: true });

    // The audit log shows these actions, filtered by an action prefix kept in the URL.
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.getByRole('textbox', { name: 'Action', exact: true }).fill('user.*');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=user\.\*/);
    await expect.poll(() => page.getByRole('cell', { name: 'user.role_changed' }).count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('cell', { name: 'user.created' }).count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('cell', { name: 'auth.login' }).count()).toBe(0);
    await page.getByRole('textbox', { name: 'Action', exact: true }).fill('user.role_changed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=user\.role_changed/);
    await expect.poll(() => page.getByRole('cell', { name: 'user.created' }).count()).toBe(0);
    await expect.poll(() => page.getByRole('cell', { name: 'user.role_changed' }).count()).toBeGreaterThan(0);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-audit-log.png', fullPage: true });
    await context.close();
  });

  it('validates the discovery job form (terraform-state), creates a pending job and cancels it', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['tenant-admin'].username);
    await page.goto('/admin/discovery');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect.poll(() => page.getByText('Give the job a name.').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('Choose the state file.').isVisible()).toBe(true);
    await expectAccessible(page);

    const state = join(tmpdir(), `cg-state-${process.pid}.tfstate`);
    await writeFile(state, JSON.stringify({ version: 4, terraform_version: '1.6.0', serial: 1, lineage: 'x', outputs: {}, resources: [] }));
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('state import');
    await page.locator('input[type="file"]').setInputFiles(state);
    await page.getByRole('checkbox', { name: 'Start at once' }).uncheck();
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.getByRole('cell', { name: 'state import', exact: true }).waitFor();
    await expect
      .poll(() =>
        page
          .getByRole('row', { name: /state import/ })
          .getByText('Pending')
          .isVisible(),
      )
      .toBe(true);
    await page.getByRole('button', { name: 'Cancel the job state import' }).click();
    await expect
      .poll(() =>
        page
          .getByRole('row', { name: /state import/ })
          .getByText('Cancelled')
          .isVisible(),
      )
      .toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-discovery.png', fullPage: true });
    await context.close();
  });

  it('the other sections load and pass the accessibility check; turning on the MFA requirement from a password session shows the refusal', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['tenant-admin'].username);
    for (const [path, heading] of [
      ['integrations', 'Integrations'],
      ['sso', 'Single sign-on'],
      ['reports', 'Reports'],
      ['security', 'Sign-in security'],
    ] as const) {
      await page.goto(`/admin/${path}`);
      await page.getByRole('heading', { level: 2, name: heading }).waitFor();
      await page
        .getByRole('status')
        .first()
        .waitFor({ state: 'detached' })
        .catch(() => undefined);
      await expectAccessible(page);
      await page.screenshot({ path: `/tmp/admin-${path}.png`, fullPage: true });
    }
    // Turning the requirement on from a session opened with a password alone would hold the admin's own session: 409.
    await page.getByRole('switch', { name: 'Require multi-factor sign-in' }).click({ force: true });
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/.+/);
    await context.close();
  });

  it('a read-only user sees the sections it may read and no write action', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.waitForURL(/\/admin\/users$/);
    await page.getByRole('cell', { name: web.app.tenant.users['tenant-admin'].username, exact: true }).waitFor();
    await page.mouse.move(0, 0); // not hovering the navigation link (its hover colours are not the check's concern)
    const tabs = await page.getByRole('tab').allTextContents();
    expect(tabs).toEqual(['Users and roles', 'Integrations', 'Single sign-on', 'Discovery jobs', 'Scanner imports', 'Schedules', 'Sign-in security']);
    expect(await page.getByRole('button', { name: 'Add user' }).count()).toBe(0);
    expect(await page.getByLabel(/^Role of/).count()).toBe(0);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-read-only.png', fullPage: true });
    await page.getByRole('tab', { name: 'Discovery jobs' }).click();
    await page.getByRole('heading', { level: 2, name: 'Discovery jobs' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create job' }).count()).toBe(0);
    await page.goto('/admin/security');
    await expect.poll(() => page.getByRole('switch', { name: 'Require multi-factor sign-in' }).isDisabled()).toBe(true);
    // A section the role may not read is not offered even by its address.
    await page.goto('/admin/api-keys');
    await page.waitForURL(/\/admin\/users$/);
    await context.close();
  });
});
