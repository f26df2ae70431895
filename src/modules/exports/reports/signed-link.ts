import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long the download_url of a report.generated event works (never past the report's retention). */
export const LINK_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Download links that need no bearer token, for the receivers of report.generated (a webhook or an
 * e-mail reader holds no API credentials). The signature is an HMAC of tenant, report and expiry with
 * a key derived from the service's token key, so a link names one report and stops working at its
 * expiry; changing any part of it breaks the signature.
 */
function linkKey(tokenKey: Uint8Array): Buffer {
  return createHmac('sha256', tokenKey).update('controlgraph report download link v1').digest();
}

function sign(tokenKey: Uint8Array, tenantId: string, reportId: string, expires: number): string {
  return createHmac('sha256', linkKey(tokenKey)).update(`${tenantId}\n${reportId}\n${expires}`).digest('hex');
}

export function signedReportUrl(tokenKey: Uint8Array, tenantId: string, reportId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `/api/v1/tenants/${tenantId}/reports/${reportId}/file?expires=${expires}&signature=${sign(tokenKey, tenantId, reportId, expires)}`;
}

/** 'ok', or why the link is refused. */
export function checkSignedLink(tokenKey: Uint8Array, tenantId: string, reportId: string, expires: number, signature: string, now: Date): 'ok' | 'invalid' | 'expired' {
  const expected = Buffer.from(sign(tokenKey, tenantId, reportId, expires), 'hex');
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return expires * 1000 <= now.getTime() ? 'expired' : 'ok';
}
