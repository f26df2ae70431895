import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';
import { assign, fromTemplate, publish } from '../questionnaires/helpers.js';

/**
 * The questionnaire builder: a security analyst starts from a template, maps a control with the
 * picker, adds a question of their own (a refusal shown under its field first), publishes, assigns it
 * with a reviewer and a due date, sees the assessment, then starts a new version and archives the old.
 */
const web = useConsole();
const SLOW = { timeout: 20_000 };
const TEMPLATE = 'fedramp-at';

const api = (path: string) => `/api/v1/tenants/${web.app.tenant.id}${path}`;
const analyst = () => web.app.tenant.users['security-analyst'];
const get = async (path: string) => (await call(web.app.t.app, analyst().token, { url: api(path), expect: 200 })).json();

/** Chooses an option of a Mantine Select (or MultiSelect) by typing into it. */
async function choose(page: Page, label: string | RegExp, option: string, scope = page.getByRole('dialog')): Promise<void> {
  // The pills wrapper of a MultiSelect takes the click for the input inside it.
  await scope
    .getByLabel(label, { exact: typeof label === 'string' })
    .filter({ visible: true })
    .click({ force: true });
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe.runIf(chromiumPath())('the questionnaire builder', () => {
  it('builds a questionnaire from a template, edits it, publishes, assigns, versions and archives it', { timeout: 300_000 }, async () => {
    const templates = await get('/questionnaires/templates?per_page=100');
    const template = templates.items.find((item: { id: string }) => item.id === TEMPLATE);
    const { context, page } = await signIn(web.browser, web.app, analyst().username);

    // The list: nothing yet, and the templates with their frameworks and question counts.
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Questionnaires' }).click();
    await page.waitForURL('**/questionnaires');
    await page.getByText('No questionnaire yet.', { exact: false }).waitFor(SLOW);
    const templateTable = page.getByRole('table', { name: 'Questionnaire templates with their frameworks and question counts' });
    await expect.poll(() => templateTable.getByRole('row').count(), SLOW).toBe(templates.total + 1);
    expect(templates.total).toBe(20);
    const row = templateTable.getByRole('row').filter({ hasText: template.title });
    expect(await row.getByRole('cell').nth(2).textContent()).toBe(String(template.question_count));
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(template.frameworks.join(', '));
    await page.screenshot({ path: '/tmp/questionnaires-list.png', fullPage: true });
    await expectAccessible(page);

    // From the template: a draft with its questions.
    await page.getByRole('button', { name: `Use the template ${template.title}` }).click();
    await page.waitForURL((url) => /^\/questionnaires\/[0-9a-f-]{36}$/.test(url.pathname), SLOW);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('heading', { level: 1, name: template.title }).waitFor(SLOW);
    expect(await page.getByText('Draft', { exact: true }).first().isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('listitem', { name: /^Question \d+$/ }).count()).toBe(template.question_count);
    await expectAccessible(page);

    // Edit the first question: a control mapping from the picker.
    const before = await get(`/questionnaires/${id}`);
    const first = before.questions[0];
    // A control no rule and no questionnaire covers yet: the picker searches the whole catalog.
    const covered = new Set((await get('/controls/status?framework=nist-800-53&per_page=500')).controls.items.map((c: { control_id: string }) => c.control_id));
    const catalog = await get('/controls/catalog?framework=nist-800-53&search=SR-&per_page=500');
    const control = catalog.items.find((c: { control_id: string }) => !covered.has(c.control_id) && !first.control_ids.includes(`nist-800-53:${c.control_id}`));
    expect(control, 'a nist-800-53 control outside /controls/status to map').toBeDefined();
    await page.getByRole('button', { name: 'Edit question 1', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit question' });
    await dialog.waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Question' }).inputValue()).toBe(first.text);
    await choose(page, 'Framework', 'nist-800-53', dialog);
    await dialog.getByLabel('Control', { exact: true }).filter({ visible: true }).fill(control.control_id);
    await page.getByRole('option', { name: `${control.control_id} — ${control.title}`, exact: true }).click();
    await page.screenshot({ path: '/tmp/questionnaires-edit.png', fullPage: true });
    await expectAccessible(page);
    await dialog.getByRole('button', { name: 'Add mapping' }).click();
    await dialog.getByTestId('question-mappings').getByText(`nist-800-53:${control.control_id}`, { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Save question' }).click();
    await page.getByText('Question saved.').waitFor(SLOW);
    await dialog.waitFor({ state: 'detached' });
    const edited = (await get(`/questionnaires/${id}`)).questions[0];
    expect(edited.control_ids).toContain(`nist-800-53:${control.control_id}`);
    expect(edited.control_mappings).toEqual([...first.control_mappings, `nist-800-53:${control.control_id}`]);

    // A question from scratch: a file upload; a malformed file type is refused under its field.
    await page.getByRole('button', { name: 'Add question' }).click();
    const adding = page.getByRole('dialog', { name: 'New question' });
    await adding.getByRole('textbox', { name: 'Question' }).fill('Upload the signed visitor log of last month.');
    await choose(page, 'Answer type', 'File upload', adding);
    await adding.getByRole('switch', { name: 'Required' }).check({ force: true });
    const types = adding.getByLabel('Accepted file types', { exact: true }).filter({ visible: true });
    await types.fill('.p-d');
    await types.press('Enter');
    await adding.getByRole('button', { name: 'Save question' }).click();
    const refusal = adding.getByText('".p-d" is not a file extension such as ".pdf"', { exact: false });
    await refusal.waitFor(SLOW);
    // Under the field: the input names it as its error.
    expect(await types.getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({ path: '/tmp/questionnaires-refusal.png' });
    await expectAccessible(page);
    await types.press('Backspace');
    await types.fill('.png');
    await types.press('Enter');
    // A framework without a catalog in the service: the mapping is typed in.
    await adding.getByLabel('Other control', { exact: true }).fill('hipaa:164.308(a)(5)');
    await adding.getByRole('button', { name: 'Add typed mapping' }).click();
    await adding.getByTestId('question-mappings').getByText('hipaa:164.308(a)(5)', { exact: true }).waitFor();
    await adding.getByRole('button', { name: 'Save question' }).click();
    await page.getByText('Question added.').waitFor(SLOW);
    await expect.poll(() => page.getByRole('listitem', { name: /^Question \d+$/ }).count()).toBe(template.question_count + 1);
    const added = (await get(`/questionnaires/${id}`)).questions.at(-1);
    expect(added).toMatchObject({ text: 'Upload the signed visitor log of last month.', type: 'file_upload', required: true });
    expect(added.accepted_types.sort()).toEqual(['.pdf', '.png']);
    expect(added.control_mappings).toEqual(['hipaa:164.308(a)(5)']);

    // Publish; then assign with a reviewer and a due date.
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Version 1 is published and can be assigned.').waitFor(SLOW);
    expect((await get(`/questionnaires/${id}`)).status).toBe('published');
    expect(await page.getByRole('button', { name: 'Add question' }).count()).toBe(0);
    const assignee = web.app.tenant.users['read-only'];
    const reviewer = web.app.tenant.users['tenant-admin'];
    const form = page.getByRole('region', { name: 'Assign' });
    await form.waitFor();
    // A required field's label ends in an asterisk.
    await choose(page, /^Assignees/, assignee.username, form);
    await page.keyboard.press('Escape');
    await choose(page, 'Reviewer', reviewer.username, form);
    const due = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await form.getByLabel('Due date').fill(due);
    await page.screenshot({ path: '/tmp/questionnaires-assign.png', fullPage: true });
    await expectAccessible(page);
    await form.getByRole('button', { name: 'Assign' }).click();
    await page.getByText('1 assessment created.').waitFor(SLOW);

    // The assessment, on the screen and in the API.
    const assessments = page.getByRole('table', { name: 'Assessments of this questionnaire' });
    await expect.poll(() => assessments.getByRole('row').count(), SLOW).toBe(2);
    const cells = assessments.getByRole('row').nth(1).getByRole('cell');
    expect(await cells.nth(0).textContent()).toBe(assignee.username);
    expect(await cells.nth(1).textContent()).toBe(reviewer.username);
    expect(await cells.nth(2).textContent()).toBe('Assigned');
    const listed = await get(`/assessments?questionnaire_id=${id}`);
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0]).toMatchObject({ assignee_id: assignee.user_id, reviewer_id: reviewer.user_id, due_date: due, status: 'assigned' });
    await page.screenshot({ path: '/tmp/questionnaires-assigned.png', fullPage: true });
    await expectAccessible(page);

    // Assigning the same person again is refused (an open assessment exists), under the assignees.
    await choose(page, /^Assignees/, assignee.username, form);
    await page.keyboard.press('Escape');
    await form.getByRole('button', { name: 'Assign' }).click();
    await form.getByText(`user "${assignee.username}" already has an open assessment of this questionnaire`).waitFor(SLOW);
    expect(
      await form
        .getByLabel(/^Assignees/)
        .first()
        .getAttribute('aria-invalid'),
    ).toBe('true');
    expect((await get(`/assessments?questionnaire_id=${id}`)).items).toHaveLength(1);

    // A new version: a draft copy, version 2, whose questions can change again.
    await page.getByRole('button', { name: 'New version' }).click();
    await page.getByText('Draft version 2 created.').waitFor(SLOW);
    await page.waitForURL((url) => url.pathname !== `/questionnaires/${id}`, SLOW);
    const versionId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByText('Version 2', { exact: true }).waitFor(SLOW);
    expect(await page.getByRole('button', { name: 'Add question' }).isVisible()).toBe(true);
    expect(await get(`/questionnaires/${versionId}`)).toMatchObject({ version: 2, status: 'draft', previous_version_id: id });
    // The draft's questions change again: the one added above is removed.
    await page.getByRole('button', { name: `Delete question ${template.question_count + 1}`, exact: true }).click();
    await page.getByText('Question deleted.').waitFor(SLOW);
    await expect.poll(() => page.getByRole('listitem', { name: /^Question \d+$/ }).count(), SLOW).toBe(template.question_count);
    expect((await get(`/questionnaires/${versionId}`)).question_count).toBe(template.question_count);

    // Archive the first version: no more assignments; the list shows both with their status.
    await page.goto(`/questionnaires/${id}`);
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByText('Version 1 is archived.').waitFor(SLOW);
    await page.getByText('Archived: it cannot be assigned any more', { exact: false }).waitFor();
    expect(await page.getByRole('region', { name: 'Assign' }).count()).toBe(0);
    expect((await get(`/questionnaires/${id}`)).status).toBe('archived');
    await page.getByRole('link', { name: 'All questionnaires' }).click();
    const list = page.getByRole('table', { name: 'Questionnaires with their version, status and question count' });
    await expect.poll(() => list.getByRole('row').count(), SLOW).toBe(3);
    expect(await list.getByText('Archived', { exact: true }).count()).toBe(1);
    expect(await list.getByText('Draft', { exact: true }).count()).toBe(1);
    await page.screenshot({ path: '/tmp/questionnaires-versions.png', fullPage: true });
    await expectAccessible(page);
    // The status filter, kept in the URL.
    await choose(page, 'Status', 'Archived', page.locator('main'));
    await page.waitForURL((url) => url.searchParams.get('status') === 'archived');
    await expect.poll(() => list.getByRole('row').count(), SLOW).toBe(2);
    await context.close();
  });

  it('creates a questionnaire from scratch and shows a read-only user no builder actions', { timeout: 240_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto('/questionnaires/new');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByText('This field is required.').waitFor();
    await page.getByRole('textbox', { name: 'Title' }).fill('Badge office attestation');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Badge office attestation' }).waitFor(SLOW);
    await page.getByText('No questions yet.').waitFor();
    await expectAccessible(page);
    // Publishing without questions is refused, with the service's reason.
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('alert').filter({ hasText: 'The questionnaire could not be changed' }).waitFor(SLOW);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    await context.close();

    const reader = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await reader.page.goto(`/questionnaires/${id}`);
    await reader.page.getByRole('heading', { level: 1, name: 'Badge office attestation' }).waitFor(SLOW);
    expect(await reader.page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
    expect(await reader.page.getByRole('button', { name: 'Add question' }).count()).toBe(0);
    await reader.page.goto('/questionnaires');
    await reader.page.getByRole('table', { name: 'Questionnaire templates with their frameworks and question counts' }).waitFor(SLOW);
    expect(await reader.page.getByRole('link', { name: 'New questionnaire' }).count()).toBe(0);
    expect(await reader.page.getByRole('button', { name: /^Use the template/ }).count()).toBe(0);
    await expectAccessible(reader.page);
    await reader.context.close();
  });
  it('sends an assignment to an outside respondent as a link shown once, which opens only that assessment and stops working when revoked', { timeout: 240_000 }, async () => {
    const t = web.app.t;
    const token = analyst().token;
    const q = await fromTemplate(t, token, web.app.tenant.id, { title: 'Supplier access review' });
    await publish(t, token, web.app.tenant.id, q.id);
    const assignee = web.app.tenant.users['read-only'];
    await assign(t, token, web.app.tenant.id, q.id, { assignees: [assignee.username], reviewer_id: analyst().user_id });
    const { context, page } = await signIn(web.browser, web.app, analyst().username);
    await page.goto(`/questionnaires/${q.id}`);
    await page.getByRole('button', { name: `Outside respondents for the assessment of ${assignee.username}` }).click(SLOW);
    const dialog = page.getByRole('dialog', { name: `Outside respondents: the assessment of ${assignee.username}` });
    await dialog.getByText('No link yet.').waitFor(SLOW);
    // Nobody named: refused in the form, nothing sent.
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await dialog.getByText('Say whom the link is for.').waitFor();
    await dialog.getByLabel(/^For whom/).fill('Acme Facilities Ltd');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    // No e-mail integration: the address is shown this once, on the console's own origin.
    const address = dialog.getByLabel('Link for the respondent');
    await address.waitFor(SLOW);
    const url = (await address.textContent())!.trim();
    expect(url.startsWith(`${web.app.base}/respond#cgr_`), url).toBe(true);
    await expect.poll(() => dialog.getByRole('row').filter({ hasText: 'Acme Facilities Ltd' }).getByText('Active').isVisible()).toBe(true);
    await page.screenshot({ path: '/tmp/questionnaires-link.png', fullPage: true });
    await expectAccessible(page);

    // The supplier, with no session: the link opens the assessment and nothing else.
    const outside = await web.browser.newContext({ baseURL: web.app.base });
    const supplier = await outside.newPage();
    await supplier.goto(url);
    await supplier.getByRole('heading', { level: 1, name: 'Supplier access review' }).waitFor(SLOW);
    expect((await supplier.request.get(api('/questionnaires'))).status()).toBe(401);

    // Revoked: used once, then the next visit is refused with the reason.
    await dialog.getByRole('button', { name: 'Revoke the link for Acme Facilities Ltd' }).click();
    await expect.poll(() => dialog.getByRole('row').filter({ hasText: 'Acme Facilities Ltd' }).getByText('Revoked').isVisible()).toBe(true);
    expect(
      await dialog
        .getByRole('row')
        .filter({ hasText: 'Acme Facilities Ltd' })
        .getByText(/^Once, last /)
        .isVisible(),
    ).toBe(true);
    await supplier.reload();
    await supplier.getByText('This link was withdrawn. Ask the person who sent it for a new one.').waitFor(SLOW);
    await outside.close();
    await context.close();
  });
});
