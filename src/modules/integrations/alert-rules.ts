import type { RequestContext } from '../../platform/auth/actor.js';
import { badRequest, notFound } from '../../platform/http/errors.js';
import { toPage, type PageRequest } from '../../platform/http/pagination.js';
import type { IntegrationService } from './integration-service.js';

/**
 * Alert rules are integrations created through a simpler body. `POST /alerts/rules` with
 * `{name, channel, url, events, secret, filters?}` creates an integration of the channel's type
 * (source `alert_rule`): it is listed by GET /integrations too and delivered by the same machinery.
 * Channels: `webhook` (url and secret required: a signed webhook), `slack` and `teams` (url: the
 * incoming webhook URL), `email` (url: `mailto:` with one or more comma-separated addresses; the
 * default SMTP server is used). Other integration types need their own fields: use /integrations.
 */
export const ALERT_CHANNELS = ['webhook', 'slack', 'teams', 'email'] as const;

export interface AlertRuleInput {
  name: string;
  channel: string;
  url: string;
  events: string[];
  secret?: string;
  filters?: Record<string, unknown>;
}

type Presented = Awaited<ReturnType<IntegrationService['present']>>;

function presentRule(integration: Presented) {
  const config = integration.config as Record<string, unknown>;
  const url = integration.type === 'email' ? `mailto:${((config.to as string[] | undefined) ?? []).join(',')}` : ((config.url as string | undefined) ?? null);
  return {
    id: integration.id,
    name: integration.name,
    channel: integration.type,
    url,
    events: (config.events as string[]) ?? [],
    filters: (config.filters as Record<string, unknown> | undefined) ?? {},
    status: integration.status,
    disabled_reason: integration.disabled_reason,
    integration_id: integration.id,
    created_at: integration.created_at,
    ...(config.secret !== undefined ? { secret: config.secret as string } : {}),
  };
}

function configOf(input: AlertRuleInput): { type: string; config: Record<string, unknown> } {
  const common = { events: input.events, ...(input.filters ? { filters: input.filters } : {}) };
  switch (input.channel) {
    case 'webhook':
      if (input.secret === undefined) throw badRequest('secret is required for the webhook channel');
      return { type: 'webhook', config: { url: input.url, secret: input.secret, ...common } };
    case 'slack':
    case 'teams':
      if (input.secret !== undefined) throw badRequest(`secret is not used by the ${input.channel} channel (its URL is the secret)`);
      return { type: input.channel, config: { url: input.url, ...common } };
    case 'email': {
      if (input.secret !== undefined) throw badRequest('secret is not used by the email channel');
      if (!/^mailto:/i.test(input.url)) throw badRequest('url of the email channel must be mailto:<address>[,<address>…]');
      const to = decodeURIComponent(input.url.replace(/^mailto:/i, '').split('?')[0]!)
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean);
      return { type: 'email', config: { to, ...common } };
    }
    default:
      throw badRequest(`channel must be one of ${ALERT_CHANNELS.join(', ')} (other integrations: POST /integrations)`);
  }
}

export function createAlertRuleService(integrations: IntegrationService) {
  return {
    async create(context: RequestContext, input: AlertRuleInput) {
      const { type, config } = configOf(input);
      // config.url, config.to … read as url in the messages of the rule body.
      try {
        return presentRule(await integrations.create(context, { type, name: input.name, config }, 'alert_rule'));
      } catch (error) {
        if (error instanceof Error && 'status' in error && (error as { status: number }).status === 400) {
          (error as { message: string }).message = error.message.replace(/^config\.(url|to)\b/, 'url').replace(/^config\./, '');
        }
        throw error;
      }
    },

    async list(context: RequestContext, page: PageRequest) {
      const { rows, total } = await integrations.listRows(context, { source: 'alert_rule' }, page);
      const items = await Promise.all(rows.map(async (r) => presentRule(await integrations.present(r))));
      return toPage(items, total, page);
    },

    async get(context: RequestContext, id: string) {
      const row = await integrations.row(context, id).catch(() => null);
      if (!row || row.source !== 'alert_rule') throw notFound('alert rule not found');
      return presentRule(await integrations.present(row));
    },

    async remove(context: RequestContext, id: string) {
      try {
        await integrations.remove(context, id, 'alert_rule');
      } catch (error) {
        if (error instanceof Error && (error as { status?: number }).status === 404) throw notFound('alert rule not found');
        throw error;
      }
    },
  };
}
