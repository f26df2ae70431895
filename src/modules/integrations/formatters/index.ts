import type { IntegrationType } from '../catalog.js';
import { slackRequest, teamsRequest } from './chat.js';
import { emailMessage } from './email.js';
import { pagerDutyRequest } from './pagerduty.js';
import { githubRequest, jiraRequest } from './tickets.js';
import type { FormatContext, Prepared } from './types.js';
import { webhookRequest } from './webhook.js';

export type { Prepared, FormatContext } from './types.js';
export { FormatError } from './types.js';

const FORMATTERS: Record<IntegrationType, (ctx: FormatContext) => Prepared> = {
  webhook: webhookRequest,
  slack: slackRequest,
  teams: teamsRequest,
  jira: jiraRequest,
  github: githubRequest,
  pagerduty: pagerDutyRequest,
  email: emailMessage,
};

/** The request (or e-mail) an event becomes for an integration of this type. */
export function prepare(type: IntegrationType, ctx: FormatContext): Prepared {
  return FORMATTERS[type](ctx);
}
