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
    await expect.poll(() => page.getByRole('row', { name: /frequent audit/ }).getByText('Every 5 minutes').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Show the runs of frequent audit' }).click();
    await page.getByRole('heading', { name: 'Runs of frequent audit' }).waitFor();
    await expect.poll(async () => page.getByRole('table', { name: 'Runs of frequent audit, newest first' }).getByRole('row').count()).toBe(2);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-schedules.png', fullPage: true });
    await context.close();
  });
});
