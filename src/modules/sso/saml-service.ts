import { inTenant } from '../../platform/db/scope.js';
import { inflateRawSync } from 'node:zlib';
import { SAML, ValidateInResponseTo, type Profile } from '@node-saml/node-saml';
import { parseDomFromString } from '@node-saml/node-saml/lib/xml.js';
import type { AppDeps } from '../../deps.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, unavailable } from '../../platform/http/errors.js';
import type { TokenResponse } from '../tenancy/index.js';
import { configBySlug } from './config-repo.js';
import { fetchLimited, FetchProblem, UrlPolicyError, type SsoSettings } from './outbound.js';
import { checkLogoutRequest, isSha1SigAlg, sha1AlgorithmsOf, sha1Refusal, validateAssertion, type AssertionCheck } from './saml-checks.js';
import { assertSafeXml, MAX_METADATA_BYTES, parseIdpMetadata, XmlProblem, type IdpMetadata } from './saml-metadata.js';
import { REQUEST_TTL_MS, requestCache, spMetadataXml } from './saml-sp.js';
import { refuseLogin, signInExternal, type RequestMeta } from './sign-in.js';
import { assertAddressNotLocked } from '../tenancy/index.js';
import { ssoUrls, type SsoUrls } from './urls.js';
import { LANDINGS, type Landing } from './schemas.js';
import type { SsoConfigRow } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'tokenKey' | 'log' | 'authCache'>;

/** Metadata fetched from a URL is refreshed after this long (at the next login or test). */
export const METADATA_TTL_MS = 24 * 60 * 60_000;
/** Limit of a SAML message after base64 decoding or inflating. */
export const MAX_MESSAGE_BYTES = 512 * 1024;

/** Decodes a SAML message: base64 (POST binding) or base64 + raw DEFLATE (Redirect binding), bounded. */
function decodeMessage(encoded: string, deflated: boolean): string {
  const raw = Buffer.from(encoded, 'base64');
  let bytes: Buffer;
  try {
    // maxOutputLength stops a decompression bomb before it is inflated.
    bytes = deflated ? inflateRawSync(raw, { maxOutputLength: MAX_MESSAGE_BYTES }) : raw;
  } catch {
    throw new XmlProblem(deflated ? 'cannot be inflated (or is larger than the limit)' : 'is not base64');
  }
  const xml = bytes.toString('utf8');
  assertSafeXml(xml, MAX_MESSAGE_BYTES);
  return xml;
}

function readableSamlError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/^Invalid (document )?signature/i.test(message) || /signature/i.test(message)) {
    return `invalid signature: the message is not signed with the IdP's certificate, or was altered after signing (${message})`;
  }
  return message;
}

export interface AcsResult {
  tokens: TokenResponse;
  redirectTo: string | null;
  /** Where the login asked to land: the RelayState, when it names one (`console`); wins over redirectTo. */
  landing: Landing | null;
}

/**
 * The RelayState comes back from the IdP unsigned (and an IdP-initiated login may carry anything, an
 * IdP's default URL too): only a landing name from the fixed list counts, never a URL.
 */
function landingOf(relayState: string | undefined): Landing | null {
  return (LANDINGS as readonly string[]).includes(relayState ?? '') ? (relayState as Landing) : null;
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createSamlService(deps: Deps, settings: SsoSettings) {
  const db = deps.database.db;

  /** The IdP metadata: inline, or fetched (and cached in the row for METADATA_TTL_MS). */
  async function idpMetadata(config: SsoConfigRow, options: { refresh?: boolean } = {}): Promise<IdpMetadata> {
    const cached: IdpMetadata | null =
      config.idp_entity_id && config.idp_certificates.length > 0
        ? { entityId: config.idp_entity_id, ssoUrl: config.idp_sso_url, sloUrl: config.idp_slo_url, certificates: config.idp_certificates }
        : null;
    const fresh = config.metadata_fetched_at && deps.clock.now().getTime() - new Date(config.metadata_fetched_at).getTime() < METADATA_TTL_MS;
    if (config.metadata_inline || !config.metadata_url || (cached && fresh && !options.refresh)) {
      if (!cached) throw unavailable('the SAML IdP metadata has not been read yet');
      return cached;
    }
    try {
      const xml = await fetchLimited(config.metadata_url, settings, {
        maxBytes: MAX_METADATA_BYTES,
        timeoutMs: 10_000,
        accept: 'application/samlmetadata+xml, application/xml, text/xml',
      });
      const metadata = await parseIdpMetadata(xml);
      await db
        .updateTable('sso_configs')
        .set({
          metadata_xml: xml,
          metadata_fetched_at: deps.clock.now(),
          idp_entity_id: metadata.entityId,
          idp_sso_url: metadata.ssoUrl,
          idp_slo_url: metadata.sloUrl,
          idp_certificates: metadata.certificates,
        })
        .where(inTenant(config.tenant_id))
        .execute();
      return metadata;
    } catch (error) {
      const reason = error instanceof FetchProblem || error instanceof UrlPolicyError || error instanceof XmlProblem ? error.message : String(error);
      if (cached && !options.refresh) {
        // A stale copy keeps logins working while the IdP's metadata endpoint is down.
        deps.log.warn({ tenantId: config.tenant_id, reason }, 'SAML metadata refresh failed; using the cached copy');
        return cached;
      }
      throw unavailable(`the SAML IdP metadata URL ${reason}`);
    }
  }

  function samlFor(tenantId: string, urls: SsoUrls, metadata: IdpMetadata): SAML {
    return new SAML({
      issuer: urls.spEntityId,
      audience: urls.spEntityId,
      callbackUrl: urls.acs,
      idpCert: metadata.certificates,
      idpIssuer: metadata.entityId,
      entryPoint: metadata.ssoUrl ?? metadata.sloUrl ?? urls.acs,
      logoutUrl: metadata.sloUrl ?? '',
      // Either the Response or the Assertion must carry a valid signature (node-saml checks the
      // assertion's whenever the response's is absent).
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      // node-saml would compare the time window with the system clock; we check it against the
      // injected clock below (validateAssertion), with CLOCK_SKEW_MS.
      acceptedClockSkewMs: -1,
      validateInResponseTo: ValidateInResponseTo.ifPresent,
      requestIdExpirationPeriodMs: REQUEST_TTL_MS,
      cacheProvider: requestCache(db, deps, tenantId),
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
    });
  }

  function attribute(profile: Profile, names: string[]): string | null {
    for (const name of names) {
      const value = (profile as Record<string, unknown>)[name];
      const single = Array.isArray(value) ? value[0] : value;
      if (typeof single === 'string' && single) return single.slice(0, 320);
    }
    return null;
  }

  return {
    idpMetadata,

    async spMetadata(slug: string): Promise<string> {
      const { tenant, config } = await configBySlug(db, slug, 'saml');
      return spMetadataXml(ssoUrls(config.service_url, tenant.slug));
    },

    /** SP-initiated login: an AuthnRequest (HTTP-Redirect); its id is remembered for InResponseTo. */
    async login(slug: string, meta: RequestMeta, landing: Landing | null = null): Promise<string> {
      // A locked address starts no logins either: each start stores a request id until the sweeper runs.
      await assertAddressNotLocked(db, deps.clock, meta.ip);
      const { tenant, config } = await configBySlug(db, slug, 'saml');
      const metadata = await idpMetadata(config);
      if (!metadata.ssoUrl) throw unavailable('the IdP metadata has no HTTP-Redirect SingleSignOnService: start the login at the IdP');
      return samlFor(tenant.id, ssoUrls(config.service_url, tenant.slug), metadata).getAuthorizeUrlAsync(landing ?? '', undefined, {});
    },

    /**
     * The assertion consumer: signature (node-saml, against the IdP metadata's certificates),
     * audience, InResponseTo when present (node-saml), then issuer, destination, recipient, time
     * window and one-time use of the assertion id (here), then the sign-in.
     */
    async acs(slug: string, body: { SAMLResponse: string; RelayState?: string }, meta: RequestMeta): Promise<AcsResult> {
      await assertAddressNotLocked(db, deps.clock, meta.ip);
      const { tenant, config } = await configBySlug(db, slug, 'saml');
      const refuse = (reason: string) => refuseLogin(deps, tenant.id, 'saml', meta, `SAML response rejected: ${reason}`);
      let xml: string;
      try {
        xml = decodeMessage(body.SAMLResponse, false);
      } catch (error) {
        throw await refuse(`the SAMLResponse ${(error as Error).message}`);
      }
      const urls = ssoUrls(config.service_url, tenant.slug);
      const metadata = await idpMetadata(config);
      let profile: Profile | null;
      let destination: string | null;
      try {
        const doc = await parseDomFromString(xml);
        destination = doc.documentElement?.getAttribute('Destination') || null;
        // Refused before the signature is checked: xml-crypto would accept SHA-1.
        const weak = config.allow_sha1 ? [] : sha1AlgorithmsOf(doc);
        if (weak.length > 0) throw new Error(sha1Refusal(weak));
        profile = (await samlFor(tenant.id, urls, metadata).validatePostResponseAsync({ SAMLResponse: body.SAMLResponse })).profile;
      } catch (error) {
        throw await refuse(readableSamlError(error));
      }
      if (!profile) throw await refuse('the response carries no assertion');
      let checked: AssertionCheck;
      try {
        checked = validateAssertion(profile, destination, urls, metadata, deps.clock.now().getTime());
      } catch (error) {
        throw await refuse(`the assertion ${(error as Error).message}`);
      }
      if ('problem' in checked) throw await refuse(checked.problem);
      const fresh = await db
        .insertInto('sso_saml_assertions')
        .values({ tenant_id: tenant.id, assertion_id: checked.id, expires_at: checked.expiresAt, created_at: deps.clock.now() })
        .onConflict((oc) => oc.columns(['tenant_id', 'assertion_id']).doNothing())
        .returning('assertion_id')
        .executeTakeFirst();
      if (!fresh) throw await refuse(`assertion ${checked.id} was already used (replay)`);
      const tokens = await signInExternal(
        deps,
        tenant,
        config.default_role,
        {
          protocol: 'saml',
          issuer: metadata.entityId,
          subject: profile.nameID,
          email:
            attribute(profile, ['email', 'mail', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']) ??
            (profile.nameIDFormat?.endsWith(':emailAddress') ? profile.nameID : null),
          displayName: attribute(profile, ['displayName', 'name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', 'urn:oid:2.16.840.1.113730.3.1.241']),
          preferredUsername: attribute(profile, ['username', 'uid', 'urn:oid:0.9.2342.19200300.100.1.1']),
          samlSessionIndex: profile.sessionIndex ?? null,
        },
        meta,
      );
      return { tokens, redirectTo: config.app_redirect_url, landing: landingOf(body.RelayState) };
    },

    /**
     * IdP-initiated single log-out (HTTP-Redirect binding): a signed LogoutRequest revokes every
     * session of the user it names (their refresh chains and access tokens), then we answer the IdP
     * with a LogoutResponse when it has a log-out endpoint.
     */
    async slo(slug: string, query: Record<string, unknown>, rawQuery: string, meta: RequestMeta): Promise<{ redirectTo: string | null; sessionsRevoked: number }> {
      await assertAddressNotLocked(db, deps.clock, meta.ip);
      const { tenant, config } = await configBySlug(db, slug, 'saml');
      const refuse = (reason: string) => refuseLogin(deps, tenant.id, 'saml', meta, `SAML logout request rejected: ${reason}`);
      if (typeof query.SAMLRequest !== 'string') {
        throw badRequest('expected a SAMLRequest (IdP-initiated single log-out over the HTTP-Redirect binding)');
      }
      // node-saml accepts an unsigned redirect message; an unsigned log-out would let anyone end sessions.
      if (typeof query.Signature !== 'string' || typeof query.SigAlg !== 'string') throw await refuse('the request is not signed');
      if (!config.allow_sha1 && isSha1SigAlg(query.SigAlg)) throw await refuse(sha1Refusal([query.SigAlg]));
      const urls = ssoUrls(config.service_url, tenant.slug);
      let xml: string;
      try {
        xml = decodeMessage(query.SAMLRequest, true);
      } catch (error) {
        throw await refuse(`the SAMLRequest ${(error as Error).message}`);
      }
      const metadata = await idpMetadata(config);
      const saml = samlFor(tenant.id, urls, metadata);
      let profile: Profile | null;
      let request: { id: string; expiresAt: Date };
      try {
        const doc = await parseDomFromString(xml);
        const weak = config.allow_sha1 ? [] : sha1AlgorithmsOf(doc);
        if (weak.length > 0) throw new Error(sha1Refusal(weak));
        request = checkLogoutRequest(doc.documentElement ?? null, urls, deps.clock.now().getTime());
        profile = (await saml.validateRedirectAsync(query as Record<string, string>, rawQuery)).profile;
      } catch (error) {
        throw await refuse(readableSamlError(error));
      }
      if (!profile?.nameID) throw await refuse('the request names no user');
      // Recorded only once the signature is known good, so nobody can use up an id the IdP will send.
      const firstUse = await db
        .insertInto('sso_saml_assertions')
        .values({ tenant_id: tenant.id, assertion_id: `logout:${request.id}`, expires_at: request.expiresAt, created_at: deps.clock.now() })
        .onConflict((oc) => oc.columns(['tenant_id', 'assertion_id']).doNothing())
        .returning('assertion_id')
        .executeTakeFirst();
      if (!firstUse) throw await refuse(`logout request ${request.id} was already used (replay)`);
      const identity = await db
        .selectFrom('sso_identities')
        .select(['id', 'user_id'])
        .where(inTenant(tenant.id))
        .where('issuer', '=', metadata.entityId)
        .where('subject', '=', profile.nameID)
        .executeTakeFirst();
      let revoked = 0;
      if (identity) {
        revoked = await changeAccess(db, deps.authCache, async (trx) => {
          const rows = await trx
            .updateTable('sessions')
            .set({ revoked_at: deps.clock.now(), revoked_reason: 'saml single log-out' })
            .where('user_id', '=', identity.user_id)
            .where('revoked_at', 'is', null)
            .returning('id')
            .execute();
          await writeAudit(
            trx,
            deps.clock,
            { type: 'system', id: null, name: 'sso:saml', ip: meta.ip, requestId: meta.requestId },
            {
              tenantId: tenant.id,
              action: 'auth.sso_logout',
              targetType: 'user',
              targetId: identity.user_id,
              details: { protocol: 'saml', issuer: metadata.entityId, subject: profile.nameID, sessions_revoked: rows.length },
            },
          );
          return rows.length;
        });
      }
      const relayState = typeof query.RelayState === 'string' ? query.RelayState : '';
      const redirectTo = metadata.sloUrl ? await saml.getLogoutResponseUrlAsync(profile, relayState, {}, Boolean(identity)) : null;
      return { redirectTo, sessionsRevoked: revoked };
    },
  };
}

export type SamlService = ReturnType<typeof createSamlService>;
