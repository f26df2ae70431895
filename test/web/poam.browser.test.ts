import { readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';

/**
 * The POA&M screens: the board by status with a move menu per card (used from the keyboard), the list
 * and its filters, an item with a milestone and a comment added, closing refused without evidence
 * (the service's reason shown), evidence uploaded and the item closed; the exports downloaded; items
 * drafted from an assessment's gaps and from a finding's page.
 */
// The demo estate gives the findings an item is drafted from.
const web = useConsole({ demo: true });
const SLOW = { timeout: 15_000 };

const api = (path: string) => `/api/v1/tenants/${web.app.tenant.id}${path}`;
const analyst = () => web.app.tenant.users['security-analyst'];

async function createItem(payload: Record<string, unknown>): Promise<{ id: string }> {
  const body = { weakness_description: 'Found in the quarterly review.', control_ids: ['AC-2'], point_of_contact: 'platform team', ...payload };
  return (await call(web.app.t.app, analyst().token, { method: 'POST', url: api('/poam'), payload: body, expect: 201 })).json();
}

/** Picks an option of a Mantine Select by its label. */
async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label, { exact: true }).filter({ visible: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
  // The dropdown closes before the next one opens (its closing transition would take the next click).
  await page.getByRole('listbox').waitFor({ state: 'hidden' });
}

describe.runIf(chromiumPath())('the POA&M screens', () => {
  it('moves items on the board, filters the list, and closes an item with evidence after the refusal without it', { timeout: 300_000 }, async () => {
    const stale = await createItem({ weakness_name: 'Stale admin accounts', severity: 'HIGH', scheduled_completion: '2099-01-31' });
    const tls = await createItem({ weakness_name: 'TLS 1.0 still offered', severity: 'LOW', scheduled_completion: '2020-01-31' });
    const backups = await createItem({ weakness_name: 'Backups not tested', severity: 'MEDIUM', scheduled_completion: '2099-06-30' });
    await call(web.app.t.app, analyst().token, { method: 'PATCH', url: api(`/poam/${backups.id}/status`), payload: { status: 'in_progress' }, expect: 200 });

    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'POA&M' }).click();
    await page.waitForURL('**/poam');
    await expect.poll(() => page.getByTestId('poam-count-total').textContent(), SLOW).toBe('3');
    expect(await page.getByTestId('poam-count-overdue').textContent()).toBe('1');
    const column = (name: RegExp) => page.getByRole('region', { name });
    await expect
      .poll(
        () =>
          column(/^Open \(/)
            .getByRole('listitem')
            .count(),
        SLOW,
      )
      .toBe(2);
    // Each column loads on its own.
    await expect
      .poll(
        () =>
          column(/^In progress \(/)
            .getByRole('listitem')
            .count(),
        SLOW,
      )
      .toBe(1);
    await expect
      .poll(
        () =>
          column(/^Closed \(/)
            .getByText('No item')
            .isVisible(),
        SLOW,
      )
      .toBe(true);
    await page.screenshot({ path: '/tmp/poam-board.png', fullPage: true });
    await expectAccessible(page);

    // A card's move menu, from the keyboard: open it, pick the one move, confirm.
    await page.getByRole('button', { name: `Move ${stale.id}` }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Move to In progress' }).waitFor();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: `Move ${stale.id} to In progress` });
    await dialog.getByLabel('Comment').fill('Started the clean-up.');
    await dialog.getByRole('button', { name: 'Move', exact: true }).click();
    await expect
      .poll(
        () =>
          column(/^In progress \(/)
            .getByRole('listitem')
            .count(),
        SLOW,
      )
      .toBe(2);
    await expect
      .poll(
        () =>
          column(/^Open \(/)
            .getByRole('listitem')
            .count(),
        SLOW,
      )
      .toBe(1);

    // The list, filtered by severity and by overdue; the filters live in the URL.
    await page.getByRole('tab', { name: 'List' }).click();
    const table = page.getByRole('table', { name: 'POA&M items' });
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(4);
    await choose(page, 'Severity', 'Low');
    await page.waitForURL((url) => url.searchParams.get('severity') === 'LOW');
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(2);
    expect(await table.getByRole('link', { name: tls.id, exact: true }).isVisible()).toBe(true);
    await choose(page, 'Severity', 'All');
    await page.waitForURL((url) => !url.searchParams.has('severity'));
    await choose(page, 'Overdue', 'Only overdue');
    await page.waitForURL((url) => url.searchParams.get('overdue') === 'true' && !url.searchParams.has('severity'));
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(2);
    expect(await table.getByText('Overdue', { exact: true }).isVisible()).toBe(true);
    await choose(page, 'Overdue', 'All');
    await page.waitForURL((url) => !url.searchParams.has('overdue'));
    await choose(page, 'Status', 'In progress');
    await page.waitForURL((url) => url.searchParams.get('status') === 'in_progress' && !url.searchParams.has('severity') && !url.searchParams.has('overdue'));
    await expect.poll(() => table.getByRole('row').count(), SLOW).toBe(3);
    await page.screenshot({ path: '/tmp/poam-list.png', fullPage: true });
    await expectAccessible(page);

    // The item: a milestone and a comment.
    await table.getByRole('link', { name: stale.id, exact: true }).click();
    await page.waitForURL(`**/poam/${stale.id}`);
    await page.getByRole('heading', { level: 1, name: `${stale.id}: Stale admin accounts` }).waitFor(SLOW);
    const milestones = page.getByRole('region', { name: 'Milestones' });
    await milestones.getByLabel(/^Date/).fill('2099-01-15');
    await milestones.getByLabel(/^Milestone/).fill('Disable accounts idle for 90 days');
    await milestones.getByRole('button', { name: 'Add milestone' }).click();
    await expect.poll(() => milestones.getByRole('cell', { name: 'Disable accounts idle for 90 days', exact: true }).isVisible(), SLOW).toBe(true);
    const log = page.getByRole('region', { name: 'Comments and history' });
    await log.getByLabel('Comment').fill('Waiting on the identity team.');
    await log.getByRole('button', { name: 'Add comment' }).click();
    await expect.poll(() => log.getByText('Waiting on the identity team.', { exact: true }).isVisible(), SLOW).toBe(true);
    expect(await log.getByText('Started the clean-up.', { exact: true }).isVisible()).toBe(true);
    await expectAccessible(page);

    // To verification, then closing without evidence: refused, with the service's reason.
    const moves = page.getByRole('region', { name: 'Status' });
    await moves.getByRole('button', { name: 'Move to Verification' }).click();
    await page
      .getByRole('dialog', { name: `Move ${stale.id} to Verification` })
      .getByRole('button', { name: 'Move', exact: true })
      .click();
    await expect.poll(() => moves.getByRole('button', { name: 'Move to Closed' }).isVisible(), SLOW).toBe(true);
    await moves.getByRole('button', { name: 'Move to Closed' }).click();
    const closing = page.getByRole('dialog', { name: `Move ${stale.id} to Closed` });
    await closing.getByRole('button', { name: 'Move', exact: true }).click();
    const refusal = closing.getByRole('alert');
    await expect.poll(() => refusal.textContent(), SLOW).toContain(`${stale.id} cannot be closed without a linked evidence artifact`);
    expect(await refusal.textContent()).toMatch(/^The move was refused/);
    await page.screenshot({ path: '/tmp/poam-refused.png', fullPage: true });
    await expectAccessible(page);
    await closing.getByRole('button', { name: 'Cancel' }).click();

    // Evidence, then closed.
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByLabel(/^Description of the next file/).fill('Access review export');
    await evidence.locator('input[type="file"]').setInputFiles({ name: 'access-review.csv', mimeType: 'text/csv', buffer: Buffer.from('user,last_login\nalice,2026-11-01\n') });
    await expect.poll(() => evidence.getByRole('link', { name: 'Download access-review.csv' }).isVisible(), SLOW).toBe(true);
    await moves.getByRole('button', { name: 'Move to Closed' }).click();
    await closing.getByLabel('Comment').fill('Accounts removed; review attached.');
    await closing.getByRole('button', { name: 'Move', exact: true }).click();
    await expect.poll(() => moves.getByText('Closed items are final.').isVisible(), SLOW).toBe(true);
    const stored = (await call(web.app.t.app, analyst().token, { url: api(`/poam/${stale.id}`), expect: 200 })).json();
    expect(stored.status).toBe('closed');
    expect(stored.milestones).toEqual([{ date: '2099-01-15', description: 'Disable accounts idle for 90 days', done: false }]);
    expect(stored.comments.map((c: { text: string }) => c.text)).toEqual(expect.arrayContaining(['Waiting on the identity team.', 'Accounts removed; review attached.']));
    // A closed item takes no more milestones nor evidence.
    expect(await evidence.getByRole('button', { name: 'Upload evidence' }).count()).toBe(0);
    expect(await milestones.getByRole('button', { name: 'Add milestone' }).count()).toBe(0);
    await page.screenshot({ path: '/tmp/poam-item.png', fullPage: true });
    await expectAccessible(page);

    // The exports download as files of their type.
    await page.getByRole('link', { name: 'All POA&M items' }).click();
    await page.getByRole('button', { name: 'Export' }).click();
    const fedramp = page.getByRole('menuitem', { name: 'FedRAMP POA&M (.xlsx)' });
    const href = await fedramp.getAttribute('href');
    const [download] = await Promise.all([page.waitForEvent('download'), fedramp.click()]);
    expect(download.suggestedFilename()).toMatch(/^poam-fedramp-\d{4}-\d{2}-\d{2}\.xlsx$/);
    const file = await download.path();
    expect((await stat(file)).size).toBeGreaterThan(1000);
    expect((await readFile(file)).subarray(0, 2).toString()).toBe('PK');
    const response = await page.request.get(href!);
    expect(response.headers()['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    await page.getByRole('button', { name: 'Export' }).click();
    // The menu closes (and leaves the page) on the click: its link is read before.
    const ombCsv = page.getByRole('menuitem', { name: 'OMB CSV (.csv)' });
    const csvHref = await ombCsv.getAttribute('href');
    const [csv] = await Promise.all([page.waitForEvent('download'), ombCsv.click()]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    const text = await readFile(await csv.path(), 'utf8');
    expect(text).toContain('TLS 1.0 still offered');
    const csvResponse = await page.request.get(csvHref!);
    expect(csvResponse.headers()['content-type']).toMatch(/^text\/csv/);
    await context.close();
  });
});

describe.runIf(chromiumPath())('drafting POA&M items from an assessment', () => {
  it('raises an item per gap of a rejected assessment, chosen on the POA&M page', { timeout: 240_000 }, async () => {
    const { t, tenant } = web.app;
    const admin = tenant.users['tenant-admin'];
    const post = async (path: string, payload: Record<string, unknown>, token = admin.token) => {
      const res = await call(t.app, token, { method: 'POST', url: api(path), payload });
      if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const questionnaire = await post('/questionnaires', {
      title: 'Badge access review',
      description: 'Physical access',
      framework: 'nist-800-53',
      questions: [{ id: 'badges', text: 'Are badges revoked on the last day?', type: 'yes_no', required: true, control_mappings: ['nist-800-53:PE-2'] }],
    });
    await post(`/questionnaires/${questionnaire.id}/publish`, {});
    const [assessment] = (await post(`/questionnaires/${questionnaire.id}/assign`, { assignees: [admin.user_id] })).items;
    await post(`/assessments/${assessment.id}/respond`, { responses: [{ question_id: 'badges', answer: 'no' }] });
    await post(`/assessments/${assessment.id}/submit`, {});
    const rejected = await post(
      `/assessments/${assessment.id}/reject`,
      { notes: 'Badges stay active for a week.', gaps: [{ question_id: 'badges', severity: 'HIGH' }] },
      analyst().token,
    );
    expect(rejected.status).toBe('changes_requested');
    const before = (await call(t.app, analyst().token, { url: api('/poam/summary'), expect: 200 })).json().total;

    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto('/poam');
    await page.getByRole('button', { name: 'Draft from an assessment' }).click();
    const dialog = page.getByRole('dialog', { name: 'Draft POA&M items from an assessment' });
    await dialog.getByLabel('Assessment', { exact: true }).click();
    await page.getByRole('option', { name: /^Badge access review — .*\(changes requested, 1 gaps\)$/ }).click();
    await expectAccessible(page);
    await dialog.getByRole('button', { name: 'Draft items' }).click();
    await expect.poll(() => page.getByTestId('poam-count-total').textContent(), SLOW).toBe(String(before + 1));
    const open = page.getByRole('region', { name: /^Open \(/ });
    await expect.poll(() => open.getByText('Badge access review: Are badges revoked on the last day?').isVisible(), SLOW).toBe(true);
    const items = (await call(t.app, analyst().token, { url: api('/poam?sort=-number&per_page=1'), expect: 200 })).json().items;
    expect(items[0]).toMatchObject({ severity: 'HIGH', control_ids: ['PE-2'], source: `assessment:${assessment.id}` });
    await context.close();
  });
});

describe.runIf(chromiumPath())('drafting a POA&M item from a finding', () => {
  it('creates the item from the finding page, links to it, and offers no second one', { timeout: 240_000 }, async () => {
    const findings = (await call(web.app.t.app, analyst().token, { url: api('/findings?status=open&per_page=1&sort=-severity'), expect: 200 })).json();
    const finding = findings.items[0];
    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto(`/findings/${encodeURIComponent(finding.id)}`);
    await page.getByRole('button', { name: 'Create POA&M item' }).click();
    const open = page.getByRole('link', { name: /^Open POAM-\d+$/ });
    await open.waitFor(SLOW);
    const id = (await open.textContent())!.replace(/^Open /, '');
    expect(await page.getByRole('button', { name: 'Create POA&M item' }).count()).toBe(0);
    await expectAccessible(page);
    await open.click();
    await page.waitForURL(`**/poam/${id}`);
    const weakness = page.getByRole('region', { name: 'Weakness' });
    await expect.poll(() => weakness.getByRole('link', { name: finding.id, exact: true }).isVisible(), SLOW).toBe(true);
    expect(await page.getByText('finding', { exact: true }).isVisible()).toBe(true);
    // Back on the finding, later: the item is found again, and no second one is offered.
    await page.goto(`/findings/${encodeURIComponent(finding.id)}`);
    await page.getByRole('link', { name: `Open ${id}` }).waitFor(SLOW);
    expect(await page.getByRole('button', { name: 'Create POA&M item' }).count()).toBe(0);
    await context.close();
  });

  it('shows a read-only user the items without any action', { timeout: 120_000 }, async () => {
    const item = await createItem({ weakness_name: 'Read-only check', severity: 'LOW' });
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.goto('/poam');
    await page
      .getByRole('region', { name: /^Open \(/ })
      .getByRole('link', { name: item.id, exact: true })
      .waitFor(SLOW);
    expect(await page.getByRole('button', { name: /^Move POAM-/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Draft from an assessment' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Export' }).isVisible()).toBe(true);
    await page.goto(`/poam/${item.id}`);
    await page.getByRole('region', { name: 'Comments and history' }).waitFor(SLOW);
    expect(await page.getByRole('button', { name: /^Move to / }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Upload evidence' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add comment' }).count()).toBe(0);
    await expectAccessible(page);
    await context.close();
  });
});
