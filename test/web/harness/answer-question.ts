import type { Page } from 'playwright-core';

/** What the respondent's form needs of a question to answer it. */
export interface AnswerableQuestion {
  text: string;
  type: string;
  min?: number;
  options?: Array<{ label: string }>;
}

/** The words a respondent types or picks, in the language the form is shown in. */
export interface AnswerWords {
  yes: string;
  text: string;
  file: { name: string; buffer: Buffer };
}

/**
 * Answers one question of the respondent's form (the outside respondent's page or /assessments/mine)
 * by its type: the form is the same for both, so are the tests' answers.
 */
export async function answerQuestion(page: Page, question: AnswerableQuestion, words: AnswerWords): Promise<void> {
  const section = page.getByRole('region', { name: question.text });
  const firstOption = question.options?.[0]?.label;
  switch (question.type) {
    case 'yes_no':
      return section.getByRole('radio', { name: words.yes }).check();
    case 'single_choice':
      return (firstOption ? section.getByRole('radio', { name: firstOption }) : section.getByRole('radio')).first().check();
    case 'multi_choice':
      return (firstOption ? section.getByRole('checkbox', { name: firstOption }) : section.getByRole('checkbox')).first().check();
    case 'date':
      return section.locator('input[type="date"]').fill('2026-11-01');
    case 'number':
      return section.getByRole('textbox').fill(String(question.min ?? 1));
    case 'file_upload':
      return section.locator('input[type="file"]').setInputFiles({ name: words.file.name, mimeType: 'application/pdf', buffer: words.file.buffer });
    default:
      return section.getByRole('textbox').fill(words.text);
  }
}
