import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';
import { fireDueSchedules } from '../../src/modules/schedules/dispatcher.js';

const web = useConsole();

describe.runIf(chromiumPath())('Administration > Schedules', () => {
  it('lists a schedule and, on request, its run history', { timeout: 180_000 }, async () => {
    const { t, tenant } = web.app;
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/schedules`,
      payload: { name: 'frequent audit', kind: 'audit', target: { frameworks: [] }, interval_seconds: 300 },
      expect: 201,
    });
    // Due once the clock has moved on; the dispatcher queues the audit and records the run.
    t.clock.advance(301_000);
    await fireDueSchedules(t.deps);

    const { context, page } = await signIn(web.browser, web.app, tenant.users['read-only'].username);
    await page.goto('/admin/schedules');
    await page.getByRole('cell', { name: 'frequent audit', exact: true }).waitFor();
    await expect
      .poll(() =>
        page
          .getByRole('row', { name: /frequent audit/ })
          .getByText('Every 5 minutes')
          .isVisible(),
      )
      .toBe(true);
    await page.getByRole('button', { name: 'Show the runs of frequent audit' }).click();
    await page.getByRole('heading', { name: 'Runs of frequent audit' }).waitFor();
    await expect.poll(async () => page.getByRole('table', { name: 'Runs of frequent audit, newest first' }).getByRole('row').count()).toBe(2);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-schedules.png', fullPage: true });
    await context.close();
  });
});

describe.runIf(chromiumPath())('Administration > Schedules: changes', () => {
  it('an analyst creates, edits, disables and deletes a schedule; refusals show at their field', { timeout: 180_000 }, async () => {
    const { tenant } = web.app;
    const { context, page } = await signIn(web.browser, web.app, tenant.users['security-analyst'].username);
    await page.goto('/admin/schedules');
    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.waitFor();
    await dialog.getByRole('textbox', { name: 'Name' }).fill('nightly audit');
    await dialog.locator('label', { hasText: /^Cron$/ }).click();
    const cron = dialog.getByRole('textbox', { name: 'Cron expression' });
    await cron.fill('61 3 * * *');
    await dialog.getByRole('combobox', { name: 'Time zone' }).click();
    await dialog.getByRole('combobox', { name: 'Time zone' }).fill('Europe/Ber');
    await page.getByRole('option', { name: 'Europe/Berlin', exact: true }).click();
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    // The service refuses the minute 61: its words appear under the cron field, not in a banner.
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByText(/61/).first().textContent()).toMatch(/61/);
    expect(await dialog.getByRole('alert').count()).toBe(0);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-schedule-form.png' });

    await cron.fill('0 3 * * *');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: /nightly audit/ });
    await expect.poll(() => row.getByText('0 3 * * * (Europe/Berlin)').isVisible()).toBe(true);
    // Enabled, so it has a next run.
    expect(await row.getByRole('switch', { name: 'nightly audit enabled' }).isChecked()).toBe(true);
    expect(await row.getByRole('cell').nth(4).textContent()).not.toBe('—');

    // Edit: from the cron expression to every two hours; an interval under 5 minutes is refused at its field first.
    await row.getByRole('button', { name: 'Edit nightly audit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit nightly audit' });
    await edit.waitFor();
    await edit.locator('label', { hasText: /^Interval$/ }).click();
    const minutes = edit.getByRole('textbox', { name: 'Every (minutes)' });
    await minutes.fill('2');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => minutes.getAttribute('aria-invalid')).toBe('true');
    await minutes.fill('120');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    await expect.poll(() => row.getByText('Every 2 hours').isVisible()).toBe(true);

    // Disable: no next run until enabled again.
    await row.getByRole('switch', { name: 'nightly audit enabled' }).locator('xpath=ancestor::label[1]').click();
    await expect.poll(() => row.getByRole('switch', { name: 'nightly audit enabled' }).isChecked()).toBe(false);
    await expect.poll(() => row.getByRole('cell').nth(4).textContent()).toBe('—');
    const stored = (await call(web.app.t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/schedules?per_page=100`, expect: 200 }))
      .json()
      .items.find((s: { name: string }) => s.name === 'nightly audit');
    expect(stored).toMatchObject({ enabled: false, cron: null, interval_seconds: 7200, time_zone: 'Europe/Berlin', next_run_at: null });
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-schedules.png', fullPage: true });

    // Delete, after confirming.
    page.once('dialog', (confirm) => void confirm.accept());
    await row.getByRole('button', { name: 'Delete nightly audit' }).click();
    await row.waitFor({ state: 'detached' });
    await context.close();
  });

  it('a discovery schedule repeats a job the analyst picks; one that cannot be repeated is refused at the job field', { timeout: 180_000 }, async () => {
    const { t, tenant } = web.app;
    const job = async (name: string, config: Record<string, unknown>) =>
      call(t.app, tenant.admin.token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/jobs`,
        payload: { name, plugins: ['terraform-state'], start: false, config: { 'terraform-state': config } },
        expect: 201,
      });
    await job('uploaded state', { state: JSON.stringify({ version: 4, terraform_version: '1.9.0', serial: 1, lineage: 'l', outputs: {}, resources: [] }) });
    // A state in S3 is read through one of the tenant's cloud connections (the job never runs here).
    const connection = (
      await call(t.app, tenant.admin.token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/cloud-connections`,
        payload: { name: 'prod account', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/controlgraph-reader' },
        expect: 201,
      })
    ).json();
    await job('prod state', { state_uri: 's3://example-state/prod/terraform.tfstate', connection_id: connection.id });

    const { context, page } = await signIn(web.browser, web.app, tenant.users['security-analyst'].username);
    await page.goto('/admin/schedules');
    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByRole('textbox', { name: 'Name' }).fill('prod discovery');
    await dialog.getByLabel('What', { exact: true }).click();
    await page.getByRole('option', { name: 'Discovery job', exact: true }).click();
    const jobField = dialog.getByLabel(/^Discovery job to repeat/);
    await jobField.click();
    await page.getByRole('option', { name: 'uploaded state (terraform-state)' }).click();
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => jobField.getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByText(/cannot be repeated: it reads an uploaded Terraform state/).count()).toBe(1);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-schedule-discovery-refused.png' });

    await jobField.click();
    await page.getByRole('option', { name: 'prod state (terraform-state)' }).click();
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: /prod discovery/ });
    await expect.poll(() => row.getByText('Every hour').isVisible()).toBe(true);
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('Discovery job');
    await context.close();
  });

  it('a read-only user sees no way to change a schedule', { timeout: 180_000 }, async () => {
    const { t, tenant } = web.app;
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/schedules`,
      payload: { name: 'weekly audit', kind: 'audit', target: { frameworks: [] }, cron: '@weekly' },
      expect: 201,
    });
    const { context, page } = await signIn(web.browser, web.app, tenant.users['read-only'].username);
    await page.goto('/admin/schedules');
    await page.getByRole('cell', { name: 'weekly audit', exact: true }).waitFor();
    expect(
      await page
        .getByRole('row', { name: /weekly audit/ })
        .getByRole('button', { name: 'Show the runs of weekly audit' })
        .count(),
    ).toBe(1);
    expect(await page.getByRole('button', { name: 'New schedule' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    expect(await page.getByRole('switch').count()).toBe(0);
    await context.close();
  });
});
