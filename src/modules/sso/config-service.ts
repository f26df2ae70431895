import { inTenant } from '../../platform/db/scope.js';
import type { Static } from 'typebox';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, forbidden, notFound } from '../../platform/http/errors.js';
import { ROLE_LEVEL } from '../../platform/rbac/roles.js';
import { clientSecretOf, sealClientSecret } from './client-secret.js';
import { configOfTenant } from './config-repo.js';
import { createConnectionTest } from './connection-test.js';
import type { OidcClients } from './oidc-client.js';
import { DEFAULT_SCOPES } from './oidc-service.js';
import { fetchUrlProblem, idpUrlProblem, type SsoSettings } from './outbound.js';
import { certificateInfo, parseIdpMetadata, XmlProblem } from './saml-metadata.js';
import type { SamlService } from './saml-service.js';
import { JIT_ROLES, type SsoConfigBody } from './schemas.js';
import type { JitRole, SsoConfigRow } from './tables.js';
import { normaliseServiceUrl, ssoUrls } from './urls.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'tokenKey' | 'log' | 'authCache'>;
type Body = Static<typeof SsoConfigBody>;

export function createSsoConfigService(deps: Deps, settings: SsoSettings, clients: OidcClients, saml: SamlService) {
  const db = deps.database.db;
  const connection = createConnectionTest(deps, settings, clients, saml);

  async function slugOf(tenantId: string): Promise<string> {
    const row = await db.selectFrom('tenants').select('slug').where('id', '=', tenantId).executeTakeFirst();
    if (!row) throw notFound('tenant not found');
    return row.slug;
  }

  async function view(config: SsoConfigRow, slug: string) {
    const urls = ssoUrls(config.service_url, slug);
    const oidc = config.protocol === 'oidc';
    const certificates = config.idp_certificates.flatMap((pem) => {
      try {
        return [certificateInfo(pem)];
      } catch {
        return [];
      }
    });
    const readable = oidc && config.client_secret_enc ? (await clientSecretOf(deps, config)) !== null : false;
    return {
      tenant_id: config.tenant_id,
      protocol: config.protocol,
      provider: config.provider,
      issuer: config.issuer,
      client_id: config.client_id,
      client_secret_set: Boolean(config.client_secret_enc),
      client_secret_readable: readable,
      scopes: oidc ? (config.scopes.length > 0 ? config.scopes : DEFAULT_SCOPES) : [],
      metadata_url: config.metadata_url,
      metadata_inline: config.metadata_inline,
      metadata_fetched_at: config.metadata_fetched_at,
      idp_entity_id: config.idp_entity_id,
      idp_sso_url: config.idp_sso_url,
      idp_slo_url: config.idp_slo_url,
      idp_certificates: certificates,
      default_role: config.default_role,
      app_redirect_url: config.app_redirect_url,
      allow_sha1: config.allow_sha1,
      service_url: config.service_url,
      login_url: oidc ? urls.oidcLogin : urls.samlLogin,
      redirect_uri: oidc ? urls.oidcCallback : null,
      sp_entity_id: oidc ? null : urls.spEntityId,
      acs_url: oidc ? null : urls.acs,
      sp_metadata_url: oidc ? null : urls.spMetadata,
      slo_url: oidc ? null : urls.slo,
      created_at: config.created_at,
      updated_at: config.updated_at,
    };
  }

  return {
    async get(context: RequestContext) {
      const tenantId = context.scope.tenantId;
      const config = await configOfTenant(db, tenantId);
      if (!config) throw notFound('SSO is not configured for this tenant');
      return view(config, await slugOf(tenantId));
    },

    /** Creates or replaces the configuration; every problem of the body is named, by field. */
    async put(context: RequestContext, body: Body, requestOrigin: string) {
      const tenantId = context.scope.tenantId;
      const slug = await slugOf(tenantId);
      const existing = await configOfTenant(db, tenantId);
      const errors: Errors = {};
      const protocol = body.provider.trim().toLowerCase() === 'saml' ? 'saml' : 'oidc';
      const { defaultRole, serviceUrl, appRedirect } = commonFields(body, requestOrigin, settings, errors);

      const row: ConfigRow = {
        protocol,
        provider: body.provider.trim(),
        issuer: null,
        client_id: null,
        client_secret_enc: null,
        scopes: [],
        metadata_url: null,
        metadata_xml: null,
        metadata_inline: false,
        metadata_fetched_at: null,
        idp_entity_id: null,
        idp_sso_url: null,
        idp_slo_url: null,
        idp_certificates: [],
        service_url: serviceUrl ?? '',
        default_role: defaultRole,
        app_redirect_url: appRedirect,
        allow_sha1: protocol === 'saml' && body.allow_sha1 === true,
      };
      const secretChanged = protocol === 'oidc' ? await oidcFields(deps, settings, tenantId, body, existing, row, errors) : false;
      if (protocol === 'saml') await samlFields(settings, body, existing, row, errors);

      const fields = Object.keys(errors);
      if (fields.length > 0) {
        const firstField = fields[0]!;
        throw badRequest(`invalid SSO configuration: ${firstField} ${errors[firstField]}`, { errors });
      }
      // The same rail as adding a user: nobody configures logins that would hold a role above their own.
      if (ROLE_LEVEL[defaultRole] > context.actor.level) throw forbidden('cannot assign a role higher than your own');

      await saveConfig(deps, context, row, existing, secretChanged);
      return { created: !existing, config: await view((await configOfTenant(db, tenantId))!, slug) };
    },

    async delete(context: RequestContext) {
      const tenantId = context.scope.tenantId;
      await db.transaction().execute(async (trx) => {
        const removed = await trx.deleteFrom('sso_configs').where(inTenant(tenantId)).returning(['protocol', 'provider']).executeTakeFirst();
        if (!removed) throw notFound('SSO is not configured for this tenant');
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'sso.config_deleted',
          targetType: 'sso_config',
          targetId: tenantId,
          details: { protocol: removed.protocol, provider: removed.provider },
        });
      });
    },

    /** Checks the stored configuration against the real IdP and says what is wrong, field by field. */
    async test(context: RequestContext) {
      const tenantId = context.scope.tenantId;
      const config = await configOfTenant(db, tenantId);
      if (!config) throw notFound('SSO is not configured for this tenant');
      const checks = await connection.run(config, await slugOf(tenantId));
      const errors: Record<string, string> = {};
      for (const check of checks) {
        if (check.status !== 'failed') continue;
        const field = check.field ?? 'configuration';
        errors[field] = errors[field] ? `${errors[field]}; ${check.message}` : check.message;
      }
      const ok = Object.keys(errors).length === 0;
      await writeAudit(db, deps.clock, actorOf(context), {
        tenantId,
        action: 'sso.config_tested',
        targetType: 'sso_config',
        targetId: tenantId,
        details: { protocol: config.protocol, ok, failed: Object.keys(errors) },
      });
      return { ok, protocol: config.protocol, checks, errors };
    },
  };
}

export type SsoConfigService = ReturnType<typeof createSsoConfigService>;

/** Problems of a body, by field, in the order they are found (the first one is named in the message). */
type Errors = Record<string, string>;
type ConfigRow = Omit<SsoConfigRow, 'tenant_id' | 'created_at' | 'updated_at'>;

/** The fields of both protocols: the role of new users, the service URL, the console to return to. */
function commonFields(body: Body, requestOrigin: string, settings: SsoSettings, errors: Errors) {
  let defaultRole: JitRole = 'read-only';
  if (body.default_role !== undefined) {
    if (body.default_role === 'system-admin') errors.default_role = `must not be above tenant-admin (one of ${JIT_ROLES.join(', ')})`;
    else if (!(JIT_ROLES as readonly string[]).includes(body.default_role)) errors.default_role = `must be one of ${JIT_ROLES.join(', ')}`;
    else defaultRole = body.default_role as JitRole;
  }

  const serviceUrl = normaliseServiceUrl(body.service_url ?? requestOrigin);
  if (!serviceUrl) errors.service_url = 'must be an absolute http(s) URL without query or fragment';
  else {
    const problem = idpUrlProblem(serviceUrl, settings);
    if (problem) errors.service_url = problem;
  }

  let appRedirect: string | null = null;
  if (body.app_redirect_url) {
    const problem = idpUrlProblem(body.app_redirect_url, settings);
    if (problem) errors.app_redirect_url = problem;
    else if (new URL(body.app_redirect_url).hash) errors.app_redirect_url = 'must not have a fragment (the tokens are put there)';
    else appRedirect = new URL(body.app_redirect_url).href;
  }
  return { defaultRole, serviceUrl, appRedirect };
}

/**
 * The OIDC fields into `row`: issuer, client, scopes; the client secret sealed, or kept when the
 * issuer and client are unchanged. Whether the secret changed.
 */
async function oidcFields(deps: Deps, settings: SsoSettings, tenantId: string, body: Body, existing: SsoConfigRow | undefined, row: ConfigRow, errors: Errors): Promise<boolean> {
  for (const field of ['metadata_url', 'metadata_xml', 'allow_sha1'] as const) {
    if (body[field] !== undefined) errors[field] = 'is a SAML field (provider "saml" selects SAML)';
  }
  if (!body.issuer) errors.issuer = 'is required for OIDC';
  else {
    const problem = await fetchUrlProblem(body.issuer, settings);
    if (problem) errors.issuer = problem;
  }
  if (!body.client_id) errors.client_id = 'is required for OIDC';
  const keepSecret = !body.client_secret && existing?.protocol === 'oidc' && existing.issuer === body.issuer && existing.client_id === body.client_id && existing.client_secret_enc;
  if (!body.client_secret && !keepSecret) errors.client_secret = 'is required for OIDC';
  if (body.scopes && !body.scopes.includes('openid')) errors.scopes = 'must include openid';
  row.issuer = body.issuer ?? null;
  row.client_id = body.client_id ?? null;
  row.scopes = body.scopes ?? [];
  if (body.client_secret) {
    row.client_secret_enc = await sealClientSecret(deps, body.client_secret, tenantId);
    return true;
  }
  if (keepSecret) row.client_secret_enc = existing.client_secret_enc;
  return false;
}

/** The SAML fields into `row`: the IdP metadata from its URL (kept while the URL is unchanged) or given inline. */
async function samlFields(settings: SsoSettings, body: Body, existing: SsoConfigRow | undefined, row: ConfigRow, errors: Errors): Promise<void> {
  for (const field of ['issuer', 'client_id', 'client_secret', 'scopes'] as const) {
    if (body[field] !== undefined) errors[field] = 'is an OIDC field (not used with provider "saml")';
  }
  if (body.metadata_url && body.metadata_xml) errors.metadata_xml = 'give metadata_url or metadata_xml, not both';
  else if (!body.metadata_url && !body.metadata_xml) errors.metadata_url = 'is required for SAML (or metadata_xml with the metadata itself)';
  else if (body.metadata_url) {
    const problem = await fetchUrlProblem(body.metadata_url, settings);
    if (problem) errors.metadata_url = problem;
    row.metadata_url = body.metadata_url;
    if (existing?.metadata_url === body.metadata_url && !existing.metadata_inline) {
      // Same source: keep what was read from it.
      Object.assign(row, {
        metadata_xml: existing.metadata_xml,
        metadata_fetched_at: existing.metadata_fetched_at,
        idp_entity_id: existing.idp_entity_id,
        idp_sso_url: existing.idp_sso_url,
        idp_slo_url: existing.idp_slo_url,
        idp_certificates: existing.idp_certificates,
      });
    }
  } else {
    try {
      const metadata = await parseIdpMetadata(body.metadata_xml!);
      Object.assign(row, {
        metadata_xml: body.metadata_xml,
        metadata_inline: true,
        idp_entity_id: metadata.entityId,
        idp_sso_url: metadata.ssoUrl,
        idp_slo_url: metadata.sloUrl,
        idp_certificates: metadata.certificates,
      });
    } catch (error) {
      if (!(error instanceof XmlProblem)) throw error;
      errors.metadata_xml = `the IdP metadata ${error.message}`;
    }
  }
}

/** Writes the configuration and its audit entry in one transaction. */
async function saveConfig(deps: Deps, context: RequestContext, row: ConfigRow, existing: SsoConfigRow | undefined, secretChanged: boolean): Promise<void> {
  const tenantId = context.scope.tenantId;
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('sso_configs')
      .values({ tenant_id: tenantId, ...row, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...row, updated_at: now }))
      .execute();
    await writeAudit(trx, deps.clock, actorOf(context), {
      tenantId,
      action: existing ? 'sso.config_updated' : 'sso.config_created',
      targetType: 'sso_config',
      targetId: tenantId,
      details: {
        protocol: row.protocol,
        provider: row.provider,
        issuer: row.issuer,
        client_id: row.client_id,
        client_secret_changed: secretChanged,
        metadata_url: row.metadata_url,
        metadata_inline: row.metadata_inline,
        default_role: row.default_role,
        app_redirect_url: row.app_redirect_url,
        allow_sha1: row.allow_sha1,
        service_url: row.service_url,
        previous: existing ? { protocol: existing.protocol, provider: existing.provider, default_role: existing.default_role } : null,
      },
    });
  });
}
