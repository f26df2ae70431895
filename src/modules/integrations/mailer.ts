import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Prepared } from './formatters/index.js';
import type { DeliverySettings } from './settings.js';
import { OutboundError, resolveOutbound } from '../../platform/outbound/index.js';

/**
 * Sends one e-mail of an e-mail integration through SMTP (nodemailer). The server is the
 * integration's own `config.smtp` (checked by the outbound guard like any target, connected by the checked
 * address with the host name kept for TLS; credentials are only sent over TLS unless the host is
 * allow-listed), or else the operator's CONTROLGRAPH_SMTP_URL.
 */
export interface SmtpConfig {
  host: string;
  port: number;
  secure: boolean;
  username?: string;
  password?: string;
  from: string;
}

export interface MailOutcome {
  ok: boolean;
  /** The SMTP reply code when there was one (250 on success). */
  code: number | null;
  response: string;
  error: string | null;
  latencyMs: number;
}

/** nodemailer error codes that carry an SMTP server's answer (authentication, envelope, message refused). */
const SMTP_ANSWERS = new Set(['EAUTH', 'EENVELOPE', 'EMESSAGE']);

export async function sendMail(settings: DeliverySettings, smtp: SmtpConfig | undefined, message: Extract<Prepared, { kind: 'email' }>, timeoutMs: number): Promise<MailOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeouts = { connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs };
  let options: SMTPTransport.Options | string;
  let from: string;
  if (smtp) {
    let target;
    try {
      target = await resolveOutbound(settings.policy, smtp.host, 'smtp:');
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      return { ok: false, code: null, response: '', error: error.failure === 'refused' ? `target refused: ${error.message}` : error.message, latencyMs: elapsed() };
    }
    options = {
      host: target.address,
      port: smtp.port,
      secure: smtp.secure,
      requireTLS: !smtp.secure && !target.allowListed && Boolean(smtp.username),
      ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
      tls: { servername: target.hostname, ...(settings.ca ? { ca: settings.ca } : {}) },
      name: 'controlgraph',
      ...timeouts,
    };
    from = smtp.from;
  } else if (settings.smtpUrl) {
    options = { url: settings.smtpUrl, ...timeouts, ...(settings.ca ? { tls: { ca: settings.ca } } : {}) };
    from = settings.smtpFrom;
  } else {
    return { ok: false, code: null, response: '', error: 'no SMTP server: set config.smtp or CONTROLGRAPH_SMTP_URL', latencyMs: elapsed() };
  }
  const transport = nodemailer.createTransport(options as SMTPTransport.Options);
  try {
    const info = await transport.sendMail({
      from,
      to: message.to,
      cc: message.cc.length ? message.cc : undefined,
      subject: message.subject,
      text: message.text,
      html: message.html,
      headers: message.headers,
    });
    const code = Number(/^(\d{3})/.exec(info.response ?? '')?.[1] ?? NaN);
    return { ok: true, code: Number.isFinite(code) ? code : null, response: info.response ?? '', error: null, latencyMs: elapsed() };
  } catch (error) {
    const e = error as Error & { responseCode?: number; response?: string; code?: string };
    if (e.responseCode === undefined && !SMTP_ANSWERS.has(e.code ?? '')) {
      // No SMTP server answered (refused, reset, not SMTP, TLS, silent): one message for all, so that
      // attempts cannot map which ports are open (as for HTTP targets).
      return { ok: false, code: null, response: '', error: `no SMTP response within ${Math.round(timeoutMs / 100) / 10} s`, latencyMs: elapsed() };
    }
    return {
      ok: false,
      code: e.responseCode ?? null,
      response: e.response ?? '',
      error: `${e.message}${e.code && !e.message.includes(e.code) ? ` (${e.code})` : ''}`,
      latencyMs: elapsed(),
    };
  } finally {
    transport.close();
  }
}
