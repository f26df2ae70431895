import { summarize, type EventSummary } from './summary.js';
import { cut, type FormatContext, type Prepared } from './types.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * Slack and Microsoft Teams incoming webhooks. Slack: a Block Kit message with a plain `text`
 * fallback (https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks).
 * Teams: an Adaptive Card in a `message` with one attachment (the format of Teams Workflows
 * webhooks), or the legacy Office 365 connector MessageCard when `config.format` is `message_card`.
 */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function footer(ctx: FormatContext): string {
  return `ControlGraph · ${ctx.envelope.type} · ${ctx.envelope.timestamp}`;
}

export function slackMessage(summary: EventSummary, ctx: FormatContext) {
  const blocks: unknown[] = [{ type: 'header', text: { type: 'plain_text', text: cut(summary.title, 150), emoji: true } }];
  if (summary.text) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: cut(slackEscape(summary.text), 3000) } });
  if (summary.facts.length) {
    blocks.push({
      type: 'section',
      // At most 10 fields of at most 2,000 characters each.
      fields: summary.facts.slice(0, 10).map(([name, value]) => ({ type: 'mrkdwn', text: cut(`*${slackEscape(name)}*\n${slackEscape(value)}`, 2000) })),
    });
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(footer(ctx)) }] });
  return { text: slackEscape(summary.title), blocks };
}

export function slackRequest(ctx: FormatContext): Prepared {
  const body = slackMessage(summarize(ctx.envelope), ctx);
  return { kind: 'http', url: String(ctx.config.url), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

const SEVERITY_COLOURS: Record<string, { card: string; hex: string }> = lookupTable({
  CRITICAL: { card: 'Attention', hex: 'A4262C' },
  HIGH: { card: 'Attention', hex: 'D13438' },
  MEDIUM: { card: 'Warning', hex: 'FFAA44' },
  LOW: { card: 'Accent', hex: '0078D4' },
  INFO: { card: 'Default', hex: '8A8886' },
});

export function adaptiveCard(summary: EventSummary, ctx: FormatContext) {
  const colour = SEVERITY_COLOURS[summary.severity ?? '']?.card ?? 'Default';
  const body: unknown[] = [{ type: 'TextBlock', text: summary.title, weight: 'Bolder', size: 'Medium', wrap: true, color: colour }];
  if (summary.text) body.push({ type: 'TextBlock', text: summary.text, wrap: true });
  if (summary.facts.length) body.push({ type: 'FactSet', facts: summary.facts.map(([title, value]) => ({ title, value })) });
  body.push({ type: 'TextBlock', text: footer(ctx), isSubtle: true, size: 'Small', wrap: true });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body },
      },
    ],
  };
}

export function messageCard(summary: EventSummary, ctx: FormatContext) {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: cut(summary.title, 250),
    themeColor: SEVERITY_COLOURS[summary.severity ?? '']?.hex ?? '0078D4',
    title: summary.title,
    sections: [
      {
        activityTitle: ctx.envelope.type,
        activitySubtitle: ctx.envelope.timestamp,
        ...(summary.text ? { text: summary.text } : {}),
        facts: summary.facts.map(([name, value]) => ({ name, value })),
        markdown: true,
      },
    ],
  };
}

export function teamsRequest(ctx: FormatContext): Prepared {
  const summary = summarize(ctx.envelope);
  const body = ctx.config.format === 'message_card' ? messageCard(summary, ctx) : adaptiveCard(summary, ctx);
  return { kind: 'http', url: String(ctx.config.url), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
