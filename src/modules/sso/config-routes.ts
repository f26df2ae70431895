import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import type { SsoConfigService } from './config-service.js';
import { SsoConfig, SsoConfigBody, SsoTestResult } from './schemas.js';

/** The tenant's SSO configuration: read (tenant:read), create or replace, remove and test (tenant:update). */
export function ssoConfigRoutes(service: SsoConfigService): RoutePlugin {
  return async (app) => {
    app.get(
      '/tenants/:tenantID/sso',
      {
        config: { permission: 'tenant:read' },
        schema: {
          operationId: 'getTenantSso',
          tags: ['sso'],
          summary: "The tenant's SSO configuration (never the client secret), with the URLs to register at the IdP",
          params: TenantParams,
          response: withErrors({ 200: SsoConfig }, [401, 403, 404]),
        },
      },
      async (request) => service.get(contextOf(request)),
    );

    app.put(
      '/tenants/:tenantID/sso',
      {
        config: { permission: 'tenant:update' },
        schema: {
          operationId: 'putTenantSso',
          tags: ['sso'],
          summary: 'Create or replace the SSO configuration (OIDC, or SAML with provider "saml")',
          description:
            'OIDC: `provider`, `issuer`, `client_id`, `client_secret` (stored encrypted, never returned). SAML: `provider: saml` and ' +
            '`metadata_url`, or `metadata_xml` with the IdP metadata itself. `default_role` (users created at their first login; never ' +
            "above tenant-admin, nor above the caller's own role) and `app_redirect_url` are optional. A 400 names every invalid field " +
            'in `details.errors`. 201 when created, 200 when replaced.',
          params: TenantParams,
          body: SsoConfigBody,
          response: withErrors({ 200: SsoConfig, 201: SsoConfig }, [401, 403, 404]),
        },
      },
      async (request, reply) => {
        const origin = `${request.protocol}://${request.host}`;
        const result = await service.put(contextOf(request), request.body, origin);
        return reply.status(result.created ? 201 : 200).send(result.config);
      },
    );

    app.delete(
      '/tenants/:tenantID/sso',
      {
        config: { permission: 'tenant:update' },
        schema: {
          operationId: 'deleteTenantSso',
          tags: ['sso'],
          summary: 'Remove the SSO configuration (users it created stay, with their memberships)',
          params: TenantParams,
          response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
        },
      },
      async (request, reply) => {
        await service.delete(contextOf(request));
        return reply.status(204).send();
      },
    );

    app.post(
      '/tenants/:tenantID/sso/test',
      {
        config: { permission: 'tenant:update', bodyless: true },
        schema: {
          operationId: 'testTenantSso',
          tags: ['sso'],
          summary: 'Check the stored configuration against the identity provider',
          description:
            'OIDC: discovery, the JWKS, and the client credentials at the token endpoint. SAML: the metadata is fetched (or the inline ' +
            "copy parsed) and the IdP certificates' validity dates checked. Answers 200 with `ok`, each check, and `errors` by field.",
          params: TenantParams,
          response: withErrors({ 200: SsoTestResult }, [401, 403, 404]),
        },
      },
      async (request) => service.test(contextOf(request)),
    );
  };
}
