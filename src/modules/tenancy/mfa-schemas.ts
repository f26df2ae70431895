import { Type } from 'typebox';

export const MfaStatus = Type.Object(
  {
    totp_enabled: Type.Boolean({ description: 'An authenticator is confirmed: password sign-ins need `otp`' }),
    enrollment_pending: Type.Boolean({ description: 'An enrollment was started and not confirmed yet' }),
    recovery_codes_left: Type.Integer({ description: 'Unused recovery codes (0 when not enabled)' }),
    required_by_tenant: Type.Boolean({
      description: 'A tenant the user belongs to (or is signed in to) requires multi-factor sign-in: it cannot be turned off',
    }),
    enrollment_required: Type.Boolean({
      description: 'This session was opened with a password alone and its tenant requires MFA: it may only enroll (then sign in again)',
    }),
    password_sign_in: Type.Boolean({ description: 'The account has a password; false for SSO-only accounts, which cannot enroll' }),
  },
  { description: "The signed-in user's multi-factor sign-in" },
);

export const MfaEnrollment = Type.Object(
  {
    secret: Type.String({ description: 'The TOTP secret in base32, for typing into an app that cannot scan' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/ControlGraph:<username>?secret=…&issuer=ControlGraph (SHA-1, 6 digits, 30 s)' }),
    qr_svg: Type.String({ description: 'The URI as a QR code: an SVG document' }),
    qr_data_url: Type.String({ description: 'The URI as a QR code: a data:image/png;base64 URL for an <img src>' }),
  },
  { description: 'A pending TOTP enrollment: show the QR code, then confirm with a code' },
);

export const MfaCodeBody = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The authenticator's current 6-digit code, or (except to confirm an enrollment) an unused recovery code such as abcde-fghij",
    }),
  },
  { additionalProperties: false },
);

export const MfaRecoveryCodes = Type.Object(
  {
    recovery_codes: Type.Array(Type.String(), { description: '10 single-use codes (xxxxx-xxxxx), shown only now' }),
    sign_in_again: Type.Optional(Type.Boolean({ description: 'Confirm only: this session stays held to enrollment; sign in again with the password and a code' })),
  },
  { description: 'New recovery codes' },
);

export const MfaSetting = Type.Object({ mfa_required: Type.Boolean({ description: 'Password sign-ins into the tenant need a second factor' }) }, { additionalProperties: false });
