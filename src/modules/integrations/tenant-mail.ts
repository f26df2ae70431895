import { inTenant } from '../../platform/db/scope.js';
import type { AppDeps } from '../../deps.js';
import { joinSecrets } from './config.js';
import { sendMail, type MailOutcome, type SmtpConfig } from './mailer.js';
import { secretBoxFor, SecretError } from '../../platform/crypto/secret-box.js';
import { deliverySettings } from './settings.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'config' | 'version' | 'log' | 'tokenKey'>;

export interface DirectMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Sends one message that is not an event (an outside respondent's link) to one recipient, through the
 * SMTP settings of the tenant's oldest active e-mail integration, at once and without storing it: the
 * message may carry a secret that must never sit in the outbox or a delivery row. The caller reports
 * the outcome to its own caller, who can fall back to another channel. null: the tenant has no active
 * e-mail integration.
 */
export async function sendTenantMail(deps: Deps, tenantId: string, mail: DirectMail): Promise<MailOutcome | null> {
  const integration = await deps.database.db
    .selectFrom('integrations')
    .select(['id', 'config', 'secrets'])
    .where(inTenant(tenantId))
    .where('type', '=', 'email')
    .where('source', '=', 'integration')
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!integration) return null;
  let config;
  try {
    const box = await secretBoxFor(deps);
    config = joinSecrets(integration.config, box.open(integration.secrets, integration.id));
  } catch (error) {
    if (error instanceof SecretError) return { ok: false, code: null, response: '', error: error.message, latencyMs: 0 };
    throw error;
  }
  // The caller's request waits for the answer: at most 10 s, shorter when the integration says so.
  const timeoutMs = Math.min(Number(config.timeout_seconds ?? 10), 10) * 1000;
  return sendMail(
    deliverySettings(deps),
    config.smtp as SmtpConfig | undefined,
    {
      kind: 'email',
      to: [mail.to],
      cc: [],
      subject: mail.subject.replace(/[\r\n]+/g, ' '),
      text: mail.text,
      html: mail.html,
      headers: { 'X-ControlGraph-Integration': integration.id },
    },
    timeoutMs,
  );
}
