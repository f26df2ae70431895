import { summarize } from './summary.js';
import type { FormatContext, Prepared } from './types.js';

/** A plain-text and an HTML part with the same content; the subject is the summary's title. */
const html = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function emailMessage(ctx: FormatContext): Prepared {
  const config = ctx.config as { to: string[]; cc?: string[]; subject_prefix: string };
  const summary = summarize(ctx.envelope);
  const footer = `ControlGraph event ${ctx.envelope.id} (${ctx.envelope.type}) at ${ctx.envelope.timestamp}`;
  const text = [summary.title, summary.text, summary.facts.map(([k, v]) => `${k}: ${v}`).join('\n'), `-- \n${footer}`].filter(Boolean).join('\n\n');
  const rows = summary.facts.map(([k, v]) => `<tr><th align="left">${html(k)}</th><td>${html(v)}</td></tr>`).join('');
  const body = [
    `<h2>${html(summary.title)}</h2>`,
    ...summary.text
      .split(/\n{2,}/)
      .filter(Boolean)
      .map((p) => `<p>${html(p)}</p>`),
    rows ? `<table>${rows}</table>` : '',
    `<p style="color:#888">${html(footer)}</p>`,
  ].join('\n');
  return {
    kind: 'email',
    to: config.to,
    cc: config.cc ?? [],
    subject: `${config.subject_prefix} ${summary.title}`.trim().replace(/[\r\n]+/g, ' '),
    text,
    html: `<!doctype html><html><body>${body}</body></html>`,
    headers: { 'X-ControlGraph-Event': ctx.envelope.type, 'X-ControlGraph-Delivery': ctx.deliveryId },
  };
}
