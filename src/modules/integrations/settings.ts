import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { AppDeps } from '../../deps.js';
import { derivePolicy, outboundPolicyOf, type OutboundPolicy } from '../../platform/outbound/index.js';

/**
 * Settings of event delivery. The retry schedule comes from the service configuration
 * (CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE), the target rules from the platform's outbound policy
 * (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS, src/platform/outbound); three more
 * variables are read here, once per process when the module starts (not at import time):
 *
 * - CONTROLGRAPH_WEBHOOK_CA_FILE: PEM file of extra certificate authorities trusted for https targets
 *   (a private CA), in addition to Node's bundled public roots.
 * - CONTROLGRAPH_SMTP_URL: the default SMTP server of e-mail integrations without their own
 *   `config.smtp` (smtp://user:pass@host:587, smtps://…:465).
 * - CONTROLGRAPH_SMTP_FROM: the sender address used with CONTROLGRAPH_SMTP_URL.
 */
export interface DeliverySettings {
  retryScheduleSeconds: number[];
  /** The outbound policy of every target (HTTP and SMTP), with the CAs and user agent below. */
  policy: OutboundPolicy;
  /** Trusted CAs for https targets; undefined means Node's defaults. */
  ca: string[] | undefined;
  smtpUrl: string | null;
  smtpFrom: string;
  userAgent: string;
  /** Bytes of a response body kept per attempt. */
  responseBodyLimit: number;
}

type Env = Record<string, string | undefined>;

export function loadDeliverySettings(deps: Pick<AppDeps, 'config' | 'version'> & Partial<Pick<AppDeps, 'log'>>, env: Env = process.env): DeliverySettings {
  const userAgent = `ControlGraph-Webhooks/${deps.version}`;
  const caFile = env.CONTROLGRAPH_WEBHOOK_CA_FILE;
  let ca: string[] | undefined;
  if (caFile) {
    try {
      ca = [...rootCertificates, readFileSync(caFile, 'utf8')];
    } catch (error) {
      throw new Error(`CONTROLGRAPH_WEBHOOK_CA_FILE: cannot read ${caFile}: ${(error as Error).message}`);
    }
  }
  const smtpUrl = env.CONTROLGRAPH_SMTP_URL || null;
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) throw new Error('CONTROLGRAPH_SMTP_URL must start with smtp:// or smtps://');
  const schedule = deps.config.webhookRetryScheduleSeconds.length ? deps.config.webhookRetryScheduleSeconds : [0, 30, 300, 1800, 7200];
  return {
    retryScheduleSeconds: schedule,
    policy: derivePolicy(outboundPolicyOf(deps.config), { ca, userAgent, log: deps.log }),
    ca,
    smtpUrl,
    smtpFrom: env.CONTROLGRAPH_SMTP_FROM || 'controlgraph@localhost',
    userAgent,
    responseBodyLimit: 1024,
  };
}

const cache = new WeakMap<object, DeliverySettings>();

/** The settings of a dependency set, loaded on first use. */
export function deliverySettings(deps: Pick<AppDeps, 'config' | 'version'> & Partial<Pick<AppDeps, 'log'>>): DeliverySettings {
  let settings = cache.get(deps);
  if (!settings) {
    settings = loadDeliverySettings(deps);
    cache.set(deps, settings);
  }
  return settings;
}
