import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call, fresh } from '../harness/identity.js';
import { api, assign, publish } from '../questionnaires/helpers.js';
import { sendExpiryReminders } from '../../src/modules/questionnaires/control-status.js';

/**
 * The Attestations tab of /controls: a control attested through an approved assessment, with its
 * expiry, days left, the 7-day warning and the reminder sent, beside a control whose questionnaire is
 * only assigned; the expiring-soon filter. Everything is seeded over HTTP; the clock then moves to six
 * days before the expiry and the reminder job runs (as the worker's schedule would).
 */
const web = useConsole();
const SLOW = { timeout: 30_000 };
const DAY = 86_400_000;

let expiresAt: string;

async function questionnaire(title: string, control: string): Promise<string> {
  const { t, tenant } = web.app;
  const q = (
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `${api(tenant.id)}/questionnaires`,
      payload: {
        title,
        framework: 'nist-800-53',
        questions: [{ id: 'policy', text: `Is the ${title.toLowerCase()} policy approved?`, type: 'yes_no', required: true, control_mappings: [`nist-800-53:${control}`] }],
      },
      expect: 201,
    })
  ).json();
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [assessment] = await assign(t, tenant.admin.token, tenant.id, q.id, {
    assignees: [tenant.users['read-only'].username],
    reviewer_id: tenant.users['security-analyst'].user_id,
  });
  return assessment!.id as string;
}

/** Full-page screenshots from the top: scrolled down, the shell's fixed header lands mid-picture. */
async function screenshot(page: Page, path: string): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
}

describe.runIf(chromiumPath())('the attestations tab', () => {
  beforeAll(async () => {
    const { t, tenant } = web.app;
    const respondent = tenant.users['read-only'].token;
    const attested = await questionnaire('Physical access', 'PE-3');
    await questionnaire('Visitor log', 'PE-8');
    await call(t.app, respondent, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${attested}/respond`,
      payload: { responses: [{ question_id: 'policy', answer: 'yes' }] },
      expect: 200,
    });
    await call(t.app, respondent, { method: 'POST', url: `${api(tenant.id)}/assessments/${attested}/submit`, expect: 200 });
    const approved = (await call(t.app, tenant.users['security-analyst'].token, { method: 'POST', url: `${api(tenant.id)}/assessments/${attested}/approve`, expect: 200 })).json();
    expiresAt = approved.attestation_expires_at;
    // Six days before the end: the 7-day reminder is due.
    t.clock.set(new Date(new Date(expiresAt).getTime() - 6 * DAY));
    await sendExpiryReminders(t.deps);
  }, 240_000);

  it('shows a control attested with its expiry, the warning and the reminder sent, and filters the expiring ones', { timeout: 240_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    const listed = (
      await call(web.app.t.app, (await fresh(web.app.t, web.app.tenant.users['security-analyst'])).token, {
        url: `${api(web.app.tenant.id)}/controls/attestations?framework=nist-800-53`,
        expect: 200,
      })
    ).json();
    expect(listed.items.find((c: { control_id: string }) => c.control_id === 'PE-3')).toMatchObject({
      status: 'attested',
      reminder_sent_days: 7,
      expiry_warning: 'urgent',
      expiring_soon: true,
    });

    await page.goto('/controls');
    await page.getByRole('tab', { name: 'Attestations' }).click();
    await page.waitForURL((url) => url.searchParams.get('tab') === 'attestations');
    const table = page.getByRole('table', { name: 'Controls covered by questionnaires and their attestation' });
    await table.waitFor(SLOW);
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(3);
    const attested = table.getByRole('row').filter({ hasText: 'PE-3' });
    const expiry = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(expiresAt));
    expect(await attested.getByText('Attested', { exact: true }).isVisible()).toBe(true);
    expect(await attested.getByText(expiry).isVisible()).toBe(true);
    expect(await attested.getByText('in 6 days').isVisible()).toBe(true);
    expect(await attested.getByText('within 7 days').isVisible()).toBe(true);
    expect(await attested.getByText('Last sent: 7 days before expiry').isVisible()).toBe(true);
    expect(await attested.getByText('Physical access', { exact: true }).isVisible()).toBe(true);
    const assigned = table.getByRole('row').filter({ hasText: 'PE-8' });
    expect(await assigned.getByText('Questionnaire assigned').isVisible()).toBe(true);
    expect(await assigned.getByText('None sent yet').isVisible()).toBe(true);
    expect(await page.getByTestId('attestation-summary').textContent()).toBe('Attested: 1 · expiring within 7 days: 1');
    await screenshot(page, '/tmp/attestations.png');
    await expectAccessible(page);

    await page.getByRole('switch', { name: 'Only expiring within 7 days' }).click({ force: true });
    await page.waitForURL((url) => url.searchParams.get('expiring') === '1');
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(2);
    expect(await table.getByText('PE-3').isVisible()).toBe(true);
    await expectAccessible(page);
    await context.close();
  });
});
