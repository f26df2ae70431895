import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { answerQuestion } from './harness/answer-question.js';
import { expectAccessible } from './harness/pages.js';
import { call } from '../harness/identity.js';
import { api, assign, fromTemplate, PDF, publish, type QuestionJson as ApiQuestion } from '../questionnaires/helpers.js';

/** A question as the API returns it (the shared helper's type leaves the text out). */
type QuestionJson = ApiQuestion & { text: string };

/**
 * An outside respondent (a supplier with no account) answers one assessment from the link a reviewer
 * sent: the page opens with the link's token alone, says what is still missing, saves as they type,
 * uploads a file (refusing a wrong type before sending it), submits, and stops working once the link
 * is withdrawn.
 */
const web = useConsole();
const SLOW = { timeout: 20_000 };

async function linkForNewAssessment(): Promise<{ token: string; assessmentId: string; questions: QuestionJson[]; title: string }> {
  const { t, tenant } = web.app;
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [tenant.users['read-only'].user_id] });
  const link = await call(t.app, tenant.users['security-analyst'].token, {
    method: 'POST',
    url: `${api(tenant.id)}/assessments/${a!.id}/links`,
    payload: { name: 'Acme Supplies' },
    expect: 201,
  });
  return { token: link.json().token, assessmentId: a!.id, questions: q.questions, title: q.title };
}

/** Answers one question through the form, by its type. */
const answer = (page: Page, question: QuestionJson) =>
  answerQuestion(page, question, { yes: 'Yes', text: 'Role-based training for administrators, yearly, tracked in the LMS.', file: { name: 'training-records.pdf', buffer: PDF } });

describe.runIf(chromiumPath())('the outside respondent’s page', () => {
  it('answers an assessment from the link alone: missing answers named, saved as typed, a file uploaded, submitted, read-only after', { timeout: 240_000 }, async () => {
    const { token, assessmentId, questions, title } = await linkForNewAssessment();
    const context = await web.browser.newContext({ baseURL: web.app.base });
    const page = await context.newPage();
    await page.goto(`/respond#${token}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe(title);
    expect(await page.getByText(/^Link for Acme Supplies, valid until /).isVisible()).toBe(true);
    // No session: the page never asked for one, and the tenant's people are not shown.
    expect(await context.cookies()).toEqual([]);
    await expectAccessible(page);

    // Submitting too early names what is missing.
    await page.getByRole('button', { name: 'Submit for review' }).click();
    const missing = page.getByRole('alert').filter({ hasText: 'Still to answer before you can submit' });
    await expect.poll(() => missing.isVisible(), SLOW).toBe(true);
    for (const question of questions.filter((q) => q.required)) expect(await missing.getByText(question.text, { exact: true }).isVisible()).toBe(true);

    // A file of a type the question does not accept is refused before anything is sent.
    const upload = questions.find((q) => q.type === 'file_upload')!;
    const files = page.getByRole('region', { name: upload.text });
    await files.locator('input[type="file"]').setInputFiles({ name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('MZ') });
    await expect.poll(() => files.getByRole('alert').textContent(), SLOW).toMatch(/^tool\.exe is not an accepted type \(/);
    expect(await files.getByText(/^Accepted: .*, up to 50 MiB each$/).isVisible()).toBe(true);

    for (const question of questions) await answer(page, question);
    await expect.poll(() => files.getByText(/^training-records\.pdf \(/).isVisible(), SLOW).toBe(true);
    await expect.poll(() => page.getByText('All answers saved').isVisible(), SLOW).toBe(true);
    // Saved in the service, not only on the page.
    await expect.poll(async () => (await call(web.app.t.app, token, { url: '/api/v1/respond/assessment', expect: 200 })).json().responses.length, SLOW).toBe(questions.length);
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Submit for review' }).click();
    await expect.poll(() => page.getByText(/^Submitted on .*Your answers are read-only while they are reviewed\.$/).isVisible(), SLOW).toBe(true);
    expect(await page.getByRole('button', { name: 'Submit for review' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: questions[0]!.text }).getByRole('radio', { name: 'Yes' }).isDisabled()).toBe(true);
    const stored = (await call(web.app.t.app, web.app.tenant.admin.token, { url: `${api(web.app.tenant.id)}/assessments/${assessmentId}`, expect: 200 })).json();
    expect(stored.status).toBe('submitted');
    await page.screenshot({ path: '/tmp/respond-submitted.png', fullPage: true });
    await context.close();
  });

  it('says so when the link is withdrawn, and when the page is opened without the token', { timeout: 120_000 }, async () => {
    const { token, assessmentId } = await linkForNewAssessment();
    const { t, tenant } = web.app;
    const links = (await call(t.app, tenant.users['security-analyst'].token, { url: `${api(tenant.id)}/assessments/${assessmentId}/links`, expect: 200 })).json();
    await call(t.app, tenant.users['security-analyst'].token, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${assessmentId}/links/${links.items[0].id}/revoke`,
      expect: 200,
    });
    const context = await web.browser.newContext({ baseURL: web.app.base });
    const page = await context.newPage();
    await page.goto(`/respond#${token}`);
    await expect.poll(() => page.getByText('This link was withdrawn. Ask the person who sent it for a new one.').isVisible(), SLOW).toBe(true);
    await expectAccessible(page);
    await page.goto('/respond');
    await page.reload();
    await expect.poll(() => page.getByText(/^This page opens with the link you were sent\./).isVisible(), SLOW).toBe(true);
    await context.close();
  });
  it('says so when the link has expired', { timeout: 120_000 }, async () => {
    const { token } = await linkForNewAssessment();
    const { clock } = web.app.t;
    const before = clock.now();
    // The service's clock past the link's 14 days (the default), then back for whatever runs next.
    clock.advance(15 * 24 * 60 * 60 * 1000);
    const context = await web.browser.newContext({ baseURL: web.app.base });
    try {
      const page = await context.newPage();
      await page.goto(`/respond#${token}`);
      await expect.poll(() => page.getByText('This link has expired. Ask the person who sent it for a new one.').isVisible(), SLOW).toBe(true);
      await expectAccessible(page);
    } finally {
      clock.set(before);
      await context.close();
    }
  });
});
