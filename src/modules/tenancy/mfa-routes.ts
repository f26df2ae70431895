import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createMfaService } from './mfa-service.js';
import { MfaCodeBody, MfaEnrollment, MfaRecoveryCodes, MfaSetting, MfaStatus } from './mfa-schemas.js';

const SIGNED_IN_USER =
  'For the signed-in user (bearer token or console session), whatever their role; API keys are refused (400). ' +
  'Answered also to a session held to enrollment (403 MFA_ENROLLMENT_REQUIRED elsewhere).';

/**
 * Multi-factor sign-in of password accounts: the user's own authenticator (TOTP) and recovery codes,
 * and the tenant's requirement. SSO sign-ins rely on the identity provider's second factor.
 */
export const mfaRoutes: RoutePlugin = async (app, { deps }) => {
  const mfa = createMfaService(deps);

  app.get(
    '/auth/mfa',
    {
      config: { duringMfaEnrollment: true },
      schema: {
        operationId: 'getMfaStatus',
        tags: ['auth'],
        summary: "The signed-in user's multi-factor sign-in: enabled, recovery codes left, required by a tenant",
        description: SIGNED_IN_USER,
        response: withErrors({ 200: MfaStatus }, [401]),
      },
    },
    async (request) => mfa.status(contextOf(request)),
  );

  app.post(
    '/auth/mfa/totp/enroll',
    {
      config: { bodyless: true, duringMfaEnrollment: true },
      schema: {
        operationId: 'enrollTotp',
        tags: ['auth'],
        summary: 'Start (or restart) enrolling an authenticator app: a new secret and its QR code',
        description:
          'Returns a new TOTP secret (base32, for typing in), its otpauth:// URI and the URI as a QR code (`qr_svg`, an SVG ' +
          'document; `qr_data_url`, a PNG data: URL for an <img>). Nothing changes at sign-in until the enrollment is ' +
          'confirmed with a code (POST /auth/mfa/totp/confirm); calling this again replaces a pending secret. ' +
          '409 when an authenticator is already enabled (turn it off first) or the account has no password (SSO). ' +
          SIGNED_IN_USER,
        response: withErrors({ 200: MfaEnrollment }, [401, 409]),
      },
    },
    async (request) => mfa.enroll(contextOf(request)),
  );

  app.post(
    '/auth/mfa/totp/confirm',
    {
      config: { duringMfaEnrollment: true },
      schema: {
        operationId: 'confirmTotp',
        tags: ['auth'],
        summary: 'Confirm the pending enrollment with a code from the app; returns 10 recovery codes, shown once',
        description:
          'From now on every password sign-in needs `otp` (POST /auth/token). The 10 recovery codes are shown only in ' +
          'this response: each signs in once in place of a code. 400 when the code does not match; 409 when no ' +
          'enrollment is pending. `sign_in_again` is true when this session was held to enrollment by the tenant: it ' +
          'stays so; sign in again with the password and a code for a full session. ' +
          SIGNED_IN_USER,
        body: MfaCodeBody,
        response: withErrors({ 200: MfaRecoveryCodes }, [401, 409]),
      },
    },
    async (request) => mfa.confirm(contextOf(request), request.body.code),
  );

  app.delete(
    '/auth/mfa/totp',
    {
      schema: {
        operationId: 'disableTotp',
        tags: ['auth'],
        summary: 'Turn multi-factor sign-in off (with a current code or a recovery code)',
        description:
          'Removes the authenticator and the recovery codes. 403 while a tenant the user belongs to requires ' +
          'multi-factor sign-in; 400 for a wrong code (wrong codes count as failed sign-in guesses: 429 after too many); ' +
          '409 when it is not enabled. For the signed-in user; API keys are refused (400).',
        body: MfaCodeBody,
        response: withErrors({ 204: Type.Null() }, [401, 403, 409, 429]),
      },
    },
    async (request, reply) => {
      await mfa.disable(contextOf(request), request.body.code);
      return reply.status(204).send();
    },
  );

  app.post(
    '/auth/mfa/recovery-codes',
    {
      schema: {
        operationId: 'regenerateRecoveryCodes',
        tags: ['auth'],
        summary: 'Replace the recovery codes with 10 new ones (with a current code); the old ones stop working',
        description:
          'The new codes are shown only in this response. 400 for a wrong code (counted as a failed sign-in guess: 429 ' +
          'after too many); 409 when multi-factor sign-in is not enabled. For the signed-in user; API keys are refused (400).',
        body: MfaCodeBody,
        response: withErrors({ 200: MfaRecoveryCodes }, [401, 409, 429]),
      },
    },
    async (request) => mfa.regenerateRecoveryCodes(contextOf(request), request.body.code),
  );

  app.get(
    '/tenants/:tenantID/settings/mfa',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'getTenantMfaSetting',
        tags: ['tenants'],
        summary: 'Whether the tenant requires multi-factor sign-in of password accounts',
        params: TenantParams,
        response: withErrors({ 200: MfaSetting }, [401, 403, 404]),
      },
    },
    async (request) => mfa.tenantSetting(contextOf(request).scope.tenantId),
  );

  app.put(
    '/tenants/:tenantID/settings/mfa',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'updateTenantMfaSetting',
        tags: ['tenants'],
        summary: 'Require (or stop requiring) multi-factor sign-in of password accounts in the tenant',
        description:
          'Audit-logged (tenant.mfa_required_changed). Applies at once: a session opened with a password alone, of a user ' +
          'without an authenticator, then answers 403 MFA_ENROLLMENT_REQUIRED everywhere except GET /auth/me, the ' +
          '/auth/mfa enrollment endpoints and logout, until the user enrolls and signs in again with a code. Users who ' +
          'sign in through SSO and API keys are not affected. While it is on, members cannot turn their authenticator off. ' +
          '409 when the caller would lock themselves out: turning it on from a session of the same tenant opened with a ' +
          'password alone (enroll and sign in with a code first).',
        params: TenantParams,
        body: MfaSetting,
        response: withErrors({ 200: MfaSetting }, [401, 403, 404, 409]),
      },
    },
    async (request) => {
      const context = contextOf(request);
      return mfa.setTenantSetting(context, context.scope.tenantId, request.body.mfa_required);
    },
  );
};
