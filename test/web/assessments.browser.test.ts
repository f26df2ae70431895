import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { answerQuestion } from './harness/answer-question.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';
import { api, assign, fromTemplate, publish, type QuestionJson as ApiQuestion } from '../questionnaires/helpers.js';

/** A question as the API returns it (the shared helper's type leaves the text out). */
type QuestionJson = ApiQuestion & { text: string };

/**
 * The signed-in respondent and the reviewer, each in their own browser: the respondent answers an
 * assessment with an evidence file and submits; the reviewer requests changes with notes; the
 * respondent sees the notes beside the questions, answers again and submits; the reviewer sees the
 * evidence previewed in the page and what an approval attests, approves; the controls are attested.
 */
const web = useConsole();
const SLOW = { timeout: 20_000 };

/**
 * A one-page PDF a viewer can render (the shared fixture is only the signature the upload checks),
 * so the reviewer's preview shows a page: the objects, then the cross-reference table of their offsets.
 */
function onePagePdf(line: string): Buffer {
  const stream = `BT /F1 18 Tf 72 720 Td (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = body.length;
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
const PDF = onePagePdf('Training records 2026: 48 of 50 staff completed');

/** Full-page screenshots from the top: scrolled down, the shell's fixed header lands mid-picture. */
async function screenshot(page: Page, path: string): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
}

/** Answers one question through the form, by its type. */
const answer = (page: Page, question: QuestionJson) =>
  answerQuestion(page, question, { yes: 'Yes', text: 'Role-based training for administrators, yearly, tracked in the LMS.', file: { name: 'training-records.pdf', buffer: PDF } });

describe.runIf(chromiumPath())('the respondent’s and the reviewer’s assessment screens', () => {
  it('answer with a file, request changes with notes, answer again, preview the evidence, approve: the controls are attested', { timeout: 360_000 }, async () => {
    const { t, tenant } = web.app;
    const respondent = tenant.users['read-only'];
    const reviewer = tenant.users['security-analyst'];
    const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
    await publish(t, tenant.admin.token, tenant.id, q.id);
    const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [respondent.user_id], reviewer_id: reviewer.user_id });
    const questions = q.questions as QuestionJson[];
    const upload = questions.find((x) => x.type === 'file_upload')!;
    const text = questions.find((x) => x.type === 'text_long' || x.type === 'text_short')!;

    // The respondent finds the assessment in their list, from the navigation.
    const mine = await signIn(web.browser, web.app, respondent.username);
    await mine.page.getByRole('navigation').getByRole('link', { name: 'My assessments' }).click();
    const list = mine.page.getByRole('table', { name: 'Assessments assigned to me' });
    await list.waitFor(SLOW);
    // A read-only respondent reviews nothing: no queue in their navigation.
    expect(await mine.page.getByRole('navigation').getByRole('link', { name: 'Review queue' }).count()).toBe(0);
    await expectAccessible(mine.page);
    await list.getByRole('link', { name: q.title }).click();
    await mine.page.waitForURL((url) => url.pathname === `/assessments/mine/${a!.id}`);
    await expect.poll(() => mine.page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe(q.title);

    // The limits are shown before anything is sent; every question answered, the file uploaded.
    const files = mine.page.getByRole('region', { name: upload.text });
    expect(await files.getByText(/^Accepted: .*, up to 50 MiB each$/).isVisible()).toBe(true);
    for (const question of questions) await answer(mine.page, question);
    await expect.poll(() => files.getByText(/^training-records\.pdf \(/).isVisible(), SLOW).toBe(true);
    await expect.poll(() => mine.page.getByText('All answers saved').isVisible(), SLOW).toBe(true);
    await expect
      .poll(async () => (await call(t.app, respondent.token, { url: `${api(tenant.id)}/assessments/${a!.id}`, expect: 200 })).json().responses.length, SLOW)
      .toBe(questions.length);
    await expectAccessible(mine.page);
    await screenshot(mine.page, '/tmp/assessments-respondent.png');
    await mine.page.getByRole('button', { name: 'Submit for review' }).click();
    await expect.poll(() => mine.page.getByText(/^Submitted on .*Your answers are read-only while they are reviewed\.$/).isVisible(), SLOW).toBe(true);

    // The reviewer opens it from the queue and asks for changes, with a note on one question.
    const review = await signIn(web.browser, web.app, reviewer.username);
    await review.page.getByRole('navigation').getByRole('link', { name: 'Review queue' }).click();
    const queue = review.page.getByRole('table', { name: 'Submitted assessments waiting for my review' });
    await queue.waitFor(SLOW);
    await expectAccessible(review.page);
    await queue.getByRole('link', { name: q.title }).click();
    await review.page.waitForURL((url) => url.pathname === `/assessments/review/${a!.id}`);
    const answers = review.page.getByRole('region', { name: 'Answers' });
    await answers.waitFor(SLOW);
    await answers.getByRole('region', { name: text.text }).getByLabel('Note on this question (optional)').fill('Name the LMS and attach last year’s completion report.');
    await review.page.getByLabel('Notes for the respondent').fill('Almost there: see the note on the training question.');
    await review.page.getByRole('button', { name: 'Request changes' }).click();
    await expect.poll(() => review.page.getByText('Changes requested from the respondent').isVisible(), SLOW).toBe(true);
    expect(await review.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    // The respondent sees the notes, the question's beside it, answers again and submits.
    await mine.page.reload();
    await expect.poll(() => mine.page.getByText('The reviewer asked for changes').isVisible(), SLOW).toBe(true);
    expect(await mine.page.getByText('Almost there: see the note on the training question.').isVisible()).toBe(true);
    const noted = mine.page.getByRole('region', { name: text.text });
    expect(await noted.getByText('Name the LMS and attach last year’s completion report.').isVisible()).toBe(true);
    await expectAccessible(mine.page);
    await noted.getByRole('textbox').fill('Role-based training in Moodle, yearly; the 2026 completion report is attached.');
    await expect.poll(() => mine.page.getByText('All answers saved').isVisible(), SLOW).toBe(true);
    await mine.page.getByRole('button', { name: 'Submit for review' }).click();
    await expect.poll(() => mine.page.getByText(/^Submitted on /).isVisible(), SLOW).toBe(true);
    expect(await noted.getByRole('textbox').isDisabled()).toBe(true);

    // The reviewer sees the new answer, the PDF in the page, and what approving attests until when.
    await review.page.reload();
    await expect.poll(() => answers.getByText('Role-based training in Moodle, yearly; the 2026 completion report is attached.').isVisible(), SLOW).toBe(true);
    const preview = review.page.getByTitle('Preview of training-records.pdf');
    await preview.waitFor(SLOW);
    const src = (await preview.getAttribute('src'))!;
    expect(src).toMatch(new RegExp(`^/api/v1/tenants/${tenant.id}/attestation-evidence/[0-9a-f-]+/download\\?disposition=inline$`));
    // Served to the page's session inline, so the browser shows it in the frame instead of downloading it.
    const served = await review.page.evaluate(async (url) => {
      const response = await fetch(url);
      return { status: response.status, type: response.headers.get('content-type'), disposition: response.headers.get('content-disposition') };
    }, src);
    expect(served).toEqual({ status: 200, type: 'application/pdf', disposition: `inline; filename="training-records.pdf"; filename*=UTF-8''training-records.pdf` });
    const controls = a!.controls as string[];
    expect(controls.length).toBeGreaterThan(0);
    const until = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(Date.now() + 365 * 24 * 60 * 60 * 1000));
    expect(await review.page.getByTestId('attestation-preview').textContent()).toBe(`Approving attests ${controls.length} controls until ${until} (365 days from today):`);
    const attests = review.page.getByRole('list', { name: 'Controls attested' });
    expect(await attests.getByRole('listitem').count()).toBe(controls.length);
    await expectAccessible(review.page);
    await screenshot(review.page, '/tmp/assessments-reviewer.png');

    await review.page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => review.page.getByText(/^Approved on /).isVisible(), SLOW).toBe(true);
    // The service's clock is the test app's (set days back), so the expiry it records is from its today.
    const expires = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(t.clock.now().getTime() + 365 * 24 * 60 * 60 * 1000));
    expect(await review.page.getByText(`${controls.length} controls attested until ${expires}:`).isVisible()).toBe(true);
    await expectAccessible(review.page);

    // The service agrees: the assessment is approved and its controls attested by it.
    const attestations = (await call(t.app, reviewer.token, { url: `${api(tenant.id)}/controls/attestations?per_page=200`, expect: 200 })).json();
    const byKey = new Map(attestations.items.map((c: { framework: string; control_id: string }) => [`${c.framework}:${c.control_id}`, c]));
    for (const key of controls) expect(byKey.get(key), key).toMatchObject({ status: 'attested', assessment_id: a!.id });

    // The queue is empty again, and says so.
    await review.page.getByRole('link', { name: '← Review queue' }).click();
    await expect.poll(() => review.page.getByRole('heading', { name: 'Nothing to review' }).isVisible(), SLOW).toBe(true);
    await expectAccessible(review.page);

    // And the respondent's form is read-only, saying so.
    await mine.page.reload();
    await expect.poll(() => mine.page.getByText('Approved. Nothing more is needed from you.').isVisible(), SLOW).toBe(true);
    expect(await mine.page.getByRole('button', { name: 'Submit for review' }).count()).toBe(0);
    // And the console's controls screen shows them attested.
    await review.page.goto('/controls?tab=attestations');
    const attestedTable = review.page.getByRole('table', { name: 'Controls covered by questionnaires and their attestation' });
    await expect.poll(() => review.page.getByTestId('attestation-summary').textContent(), SLOW).toMatch(new RegExp(`^Attested: ${controls.length} `));
    const firstControl = controls[0]!.split(':')[1]!;
    expect(await attestedTable.getByRole('row').filter({ hasText: firstControl }).first().getByText('Attested', { exact: true }).isVisible()).toBe(true);
    await expectAccessible(review.page);
    await mine.context.close();
    await review.context.close();
  });
});
