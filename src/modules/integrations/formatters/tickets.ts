import { summarize, type EventSummary } from './summary.js';
import { cut, FormatError, type FormatContext, type Prepared } from './types.js';

/**
 * Issue creation. Jira: POST {base_url}/rest/api/{2|3}/issue with `fields` (project key, issue type,
 * summary, description, labels); API v3 (Jira Cloud) takes the description as an Atlassian Document
 * Format document, v2 (Cloud and Data Center) as plain text. Authentication: Basic e-mail:API token
 * (Cloud) when `email` is set, else a Bearer personal access token (Data Center).
 * GitHub: POST {api_url}/repos/{owner}/{repo}/issues with title, body (Markdown) and labels, a Bearer
 * token and the versioned media type.
 *
 * One issue per delivered event. Creating an issue is not idempotent at either API: a retry after a
 * timeout whose request did arrive opens a second issue (the delivery id is in the issue text).
 */
const trimSlash = (url: string) => url.replace(/\/+$/, '');

function plainDescription(summary: EventSummary, ctx: FormatContext): string {
  const lines = [
    summary.text,
    summary.facts.map(([k, v]) => `* ${k}: ${v}`).join('\n'),
    `ControlGraph event ${ctx.envelope.id} (${ctx.envelope.type}), delivery ${ctx.deliveryId}`,
  ];
  return lines.filter(Boolean).join('\n\n');
}

const adfText = (text: string, strong = false) => ({ type: 'text', text, ...(strong ? { marks: [{ type: 'strong' }] } : {}) });
const adfParagraph = (...content: unknown[]) => ({ type: 'paragraph', content });

export function adfDescription(summary: EventSummary, ctx: FormatContext) {
  const content: unknown[] = [];
  for (const paragraph of summary.text.split(/\n{2,}/).filter(Boolean)) content.push(adfParagraph(adfText(paragraph)));
  if (summary.facts.length) {
    content.push({
      type: 'bulletList',
      content: summary.facts.map(([k, v]) => ({ type: 'listItem', content: [adfParagraph(adfText(`${k}: `, true), adfText(v))] })),
    });
  }
  content.push(adfParagraph(adfText(`ControlGraph event ${ctx.envelope.id} (${ctx.envelope.type}), delivery ${ctx.deliveryId}`)));
  return { type: 'doc', version: 1, content };
}

export function jiraRequest(ctx: FormatContext): Prepared {
  const config = ctx.config as { base_url: string; project_key: string; issue_type: string; api_version: number; email?: string; api_token: string; labels: string[] };
  const summary = summarize(ctx.envelope);
  const description = config.api_version === 2 ? plainDescription(summary, ctx) : adfDescription(summary, ctx);
  const body = {
    fields: {
      project: { key: config.project_key },
      issuetype: { name: config.issue_type },
      // Jira limits the summary to 255 characters and refuses line breaks in it.
      summary: cut(summary.title.replace(/[\r\n]+/g, ' '), 255),
      description,
      labels: config.labels,
    },
  };
  const authorization = config.email ? `Basic ${Buffer.from(`${config.email}:${config.api_token}`).toString('base64')}` : `Bearer ${config.api_token}`;
  return {
    kind: 'http',
    url: `${trimSlash(config.base_url)}/rest/api/${config.api_version}/issue`,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
    body: JSON.stringify(body),
  };
}

export function githubRequest(ctx: FormatContext): Prepared {
  const config = ctx.config as { api_url: string; repository: string; token: string; labels: string[] };
  const [owner, repo] = config.repository.split('/');
  if (!owner || !repo) throw new FormatError('config.repository must be owner/repo');
  const summary = summarize(ctx.envelope);
  const text = [
    summary.text,
    summary.facts.length ? `| | |\n|---|---|\n${summary.facts.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`).join('\n')}` : '',
    `<sub>ControlGraph event \`${ctx.envelope.id}\` (${ctx.envelope.type}), delivery \`${ctx.deliveryId}\`</sub>`,
  ];
  return {
    kind: 'http',
    url: `${trimSlash(config.api_url)}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/issues`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${config.token}`,
      'x-github-api-version': '2022-11-28',
    },
    body: JSON.stringify({ title: cut(summary.title, 256), body: text.filter(Boolean).join('\n\n'), labels: config.labels }),
  };
}
