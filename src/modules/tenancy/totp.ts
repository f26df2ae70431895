import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { hashSecret } from '../../platform/auth/api-key-secret.js';

/**
 * TOTP (RFC 6238) as every authenticator app reads it: SHA-1, 6 digits, 30-second steps, a 160-bit
 * base32 secret (otplib's defaults). Time comes from the injected clock, never from Date.now().
 */
export const TOTP_PERIOD_SECONDS = 30;
const ISSUER = 'ControlGraph';
const TOTP_CODE = /^\d{6}$/;

export function newTotpSecret(): string {
  return generateSecret();
}

export interface EnrollmentMaterial {
  secret: string;
  otpauth_uri: string;
  qr_svg: string;
  qr_data_url: string;
}

/** What an authenticator app needs: the otpauth:// URI, drawn as a QR code (SVG and PNG data URL) so the console needs no library. */
export async function enrollmentMaterial(secret: string, username: string): Promise<EnrollmentMaterial> {
  const uri = generateURI({ issuer: ISSUER, label: username, secret });
  const [svg, png] = await Promise.all([
    QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }),
    QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 }),
  ]);
  return { secret, otpauth_uri: uri, qr_svg: svg, qr_data_url: png };
}

export function looksLikeTotpCode(code: string): boolean {
  return TOTP_CODE.test(code);
}

/**
 * The time step a code was made for, or null when it is wrong. One step either side of now is
 * accepted (phone clocks drift); a step at or before `after` (the last one accepted) is refused, so a
 * code cannot be played twice.
 */
export async function acceptedTimeStep(secret: string, code: string, now: Date, after: number | null): Promise<number | null> {
  if (!looksLikeTotpCode(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOTP_PERIOD_SECONDS,
    ...(after !== null ? { afterTimeStep: after } : {}),
  });
  // The functional API types HOTP's result too; a TOTP match carries its time step.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/**
 * Recovery codes: 10 characters of lower-case base32 (50 random bits), shown as `xxxxx-xxxxx`.
 * Entered with or without the dash, in any case, with spaces.
 */
export const RECOVERY_CODE_COUNT = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = [...randomBytes(10)].map((byte) => BASE32[byte & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** The code in its stored form, or null when it cannot be a recovery code. */
export function normalizeRecoveryCode(code: string): string | null {
  const normalized = code.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z2-7]{10}$/.test(normalized) ? normalized : null;
}

/** Only this is stored; the user id is mixed in so one code's hash says nothing about another user's. */
export function hashRecoveryCode(userId: string, normalized: string): string {
  return hashSecret(`${userId}:${normalized}`);
}
