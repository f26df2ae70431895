import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { answerQuestion } from './harness/answer-question.js';
import { expectAccessible } from './harness/pages.js';
import { call } from '../harness/identity.js';
import { api, assign, fromTemplate, PDF, publish } from '../questionnaires/helpers.js';
import { templateIn, type Template } from '../../src/modules/questionnaires/templates.js';

/**
 * The respondent path in German end to end (issue 25): a supplier whose browser says de-DE opens the
 * link to a questionnaire the reviewer created in English, and reads both the page and the
 * questionnaire (title, questions, options) in German; answers, uploads a file and submits.
 */
const web = useConsole();
const SLOW = { timeout: 20_000 };
type Question = Template['questions'][number];

/** Answers one question through the form, by its type. */
const answer = (page: Page, question: Question) =>
  answerQuestion(page, question, {
    yes: 'Ja',
    text: 'Rollenbasierte Schulung für Administratoren, jährlich, im LMS nachverfolgt.',
    file: { name: 'schulungsnachweise.pdf', buffer: PDF },
  });

describe.runIf(chromiumPath())('the outside respondent’s page in German', () => {
  it('de-DE: console texts and the questionnaire in German; answered, a file uploaded, submitted', { timeout: 240_000 }, async () => {
    const { t, tenant } = web.app;
    const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at', lang: 'en' });
    await publish(t, tenant.admin.token, tenant.id, q.id);
    const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [tenant.users['read-only'].user_id] });
    const link = await call(t.app, tenant.users['security-analyst'].token, {
      method: 'POST',
      url: `${api(tenant.id)}/assessments/${a!.id}/links`,
      payload: { name: 'Lieferant GmbH' },
      expect: 201,
    });
    const token = link.json().token as string;
    const de = templateIn('fedramp-at', 'de')!;
    const en = templateIn('fedramp-at', 'en')!;
    expect(q.title).toBe(en.title);

    const context = await web.browser.newContext({ baseURL: web.app.base, locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    const page = await context.newPage();
    await page.goto(`/respond#${token}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe(de.title);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    expect(await page.getByText(/^Link für Lieferant GmbH, gültig bis \d/).isVisible()).toBe(true);
    // Every question in German, none left in English.
    for (const question of de.questions) expect(await page.getByRole('region', { name: question.text }).count()).toBe(1);
    for (const question of en.questions) expect(await page.getByText(question.text, { exact: true }).count()).toBe(0);
    // Units of number questions are ids the page words in its language (years → Jahre).
    const years = de.questions.find((x) => x.unit === 'years')!;
    expect(await page.getByRole('region', { name: years.text }).getByText('Jahre', { exact: true }).isVisible()).toBe(true);
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Zur Prüfung einreichen' }).click();
    const missing = page.getByRole('alert').filter({ hasText: 'Vor dem Einreichen noch zu beantworten' });
    await expect.poll(() => missing.isVisible(), SLOW).toBe(true);
    for (const question of de.questions.filter((x) => x.required)) expect(await missing.getByText(question.text, { exact: true }).isVisible()).toBe(true);

    for (const question of de.questions) await answer(page, question);
    const upload = de.questions.find((x) => x.type === 'file_upload')!;
    await expect
      .poll(
        () =>
          page
            .getByRole('region', { name: upload.text })
            .getByText(/^schulungsnachweise\.pdf \(/)
            .isVisible(),
        SLOW,
      )
      .toBe(true);
    await expect.poll(() => page.getByText('Alle Antworten gespeichert').isVisible(), SLOW).toBe(true);
    // Saved as the language-neutral option values, whatever language they were chosen in.
    const saved = (await call(t.app, token, { url: '/api/v1/respond/assessment?lang=en', expect: 200 })).json();
    expect(saved.responses).toHaveLength(de.questions.length);
    const choice = en.questions.find((x) => x.type === 'single_choice')!;
    expect(saved.responses.find((r: { question_id: string }) => r.question_id === choice.id).answer).toBe(choice.options![0]!.value);
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Zur Prüfung einreichen' }).click();
    await expect.poll(() => page.getByText(/^Eingereicht am .*Ihre Antworten sind während der Prüfung schreibgeschützt\.$/).isVisible(), SLOW).toBe(true);
    expect(await page.getByRole('button', { name: 'Zur Prüfung einreichen' }).count()).toBe(0);
    await expectAccessible(page);
    const stored = (await call(t.app, tenant.admin.token, { url: `${api(tenant.id)}/assessments/${a!.id}`, expect: 200 })).json();
    expect(stored.status).toBe('submitted');
    await page.screenshot({ path: '/tmp/respond-de-submitted.png', fullPage: true });
    await context.close();
  });
});
