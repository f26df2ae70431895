import type { DirectMail } from '../integrations/index.js';

/** The e-mail that carries an outside respondent's link: plain text and the same in HTML. */
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function linkMail(input: { to: string; name: string; title: string; url: string; expiresAt: Date; dueDate: string | null; sender: string }): DirectMail {
  const expires = input.expiresAt.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  const lines = [
    `Hello ${input.name},`,
    `${input.sender} asks you to answer the questionnaire "${input.title}".`,
    `Open this link to answer it and upload the requested files (no account is needed):\n${input.url}`,
    `The link works until ${expires}${input.dueDate ? `; the answers are due on ${input.dueDate}` : ''}. Do not forward it: whoever holds it can answer in your name.`,
  ];
  return {
    to: input.to,
    subject: `Questionnaire to answer: ${input.title}`,
    text: lines.join('\n\n'),
    html: `<!doctype html><html><body>${lines
      .map(
        (line) =>
          `<p>${escape(line)
            .replace(escape(input.url), `<a href="${escape(input.url)}">${escape(input.url)}</a>`)
            .replace(/\n/g, '<br>')}</p>`,
      )
      .join('\n')}</body></html>`,
  };
}
