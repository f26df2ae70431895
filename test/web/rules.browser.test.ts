import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';

const web = useConsole({ demo: true });
/** Polls wait this long: the machine running the tests is shared and slow. */
const SLOW = { timeout: 20_000 };

describe.runIf(chromiumPath())('the rules screen', () => {
  it('lists built-in rules; a custom rule with a broken condition shows the compile error inline, then saves and edits', async () => {
    const builtins = (await call(web.app.t.app, web.app.tenant.admin.token, { url: `/api/v1/tenants/${web.app.tenant.id}/rules?builtin=true&per_page=1`, expect: 200 })).json();
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto('/rules');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Rules');
    await expect.poll(() => page.getByText(`${builtins.total} in all`).isVisible(), SLOW).toBe(true);
    await expect.poll(() => page.getByRole('link', { name: builtins.items[0].title }).isVisible(), SLOW).toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/rules.png', fullPage: true });

    // A built-in rule: its condition and mappings, no edit.
    await page.getByRole('link', { name: builtins.items[0].title, exact: true }).click();
    await page.waitForURL((url) => url.pathname === `/rules/${builtins.items[0].id}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe(builtins.items[0].title);
    await expect.poll(() => page.getByText(builtins.items[0].condition, { exact: true }).isVisible(), SLOW).toBe(true);
    expect(await page.getByRole('table', { name: 'Controls a failure of this rule fails' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByText('Built-in rules are read-only.').isVisible()).toBe(true);
    await expectAccessible(page);

    // Create: a condition that does not compile is refused, its message under the condition.
    await page.goto('/rules');
    await page.getByRole('link', { name: 'New custom rule' }).click();
    await page.getByLabel(/^Id/).fill('custom-bucket-named-public');
    await page.getByLabel(/^Title/).fill('Bucket name does not say public');
    await page.getByLabel(/^Description/).fill('Naming hygiene for buckets.');
    await page.getByLabel(/^Resource type/).fill('aws.s3.bucket');
    await page.getByRole('textbox', { name: /^Control/ }).fill('AC-3');
    await page.getByLabel(/^Condition \(CEL\)/).fill('resource.name ==');
    await page.getByLabel(/^Remediation/).fill('Rename the bucket.');
    await page.getByRole('button', { name: 'Create rule' }).click();
    const condition = page.getByLabel(/^Condition \(CEL\)/);
    await expect.poll(() => condition.getAttribute('aria-invalid'), SLOW).toBe('true');
    const describedBy = (await condition.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.includes('error'));
    expect(errorId).toBeTruthy();
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/^condition does not compile/);
    await expectAccessible(page);

    // Fixed, it saves and opens the new rule.
    await condition.fill("resource.name.contains('public')");
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.waitForURL(/\/rules\/custom-bucket-named-public$/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Bucket name does not say public');

    // Edit it.
    await page.getByRole('link', { name: 'Edit' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Edit custom-bucket-named-public');
    await page.getByLabel(/^Title/).fill('Bucket name never says public');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.waitForURL(/\/rules\/custom-bucket-named-public$/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Bucket name never says public');
    const saved = (await call(web.app.t.app, web.app.tenant.admin.token, { url: `/api/v1/tenants/${web.app.tenant.id}/rules/custom-bucket-named-public`, expect: 200 })).json();
    expect(saved).toMatchObject({ title: 'Bucket name never says public', condition: "resource.name.contains('public')", builtin: false });
    await context.close();
  }, 180_000);

  it('a read-only user sees no create or edit', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.goto('/rules?builtin=false');
    await expect.poll(() => page.getByRole('link', { name: /Bucket name/ }).isVisible(), SLOW).toBe(true);
    expect(await page.getByRole('link', { name: 'New custom rule' }).count()).toBe(0);
    await page.getByRole('link', { name: /Bucket name/ }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Bucket name never says public');
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await expectAccessible(page);
    await context.close();
  }, 60_000);
});
