import { inTenant } from '../../platform/db/scope.js';
import type { CacheProvider } from '@node-saml/node-saml';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { SsoUrls } from './urls.js';

/** Our side of SAML: the service-provider metadata and the store of AuthnRequest ids we sent. */

/** How long an AuthnRequest id we sent stays acceptable as InResponseTo. */
export const REQUEST_TTL_MS = 10 * 60_000;

export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Our service-provider metadata: ACS (HTTP-POST), single log-out (HTTP-Redirect), signed assertions wanted. */
export function spMetadataXml(urls: SsoUrls): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${escapeXml(urls.spEntityId)}">`,
    '  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">',
    `    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${escapeXml(urls.slo)}"/>`,
    '    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>',
    '    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>',
    `    <md:AssertionConsumerService index="0" isDefault="true" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${escapeXml(urls.acs)}"/>`,
    '  </md:SPSSODescriptor>',
    '</md:EntityDescriptor>',
    '',
  ].join('\n');
}

/** node-saml's InResponseTo store, in the database so any API process can receive the response. */
export function requestCache(db: Kysely<Database>, deps: Pick<AppDeps, 'clock'>, tenantId: string): CacheProvider {
  return {
    async saveAsync(key, value) {
      const now = deps.clock.now();
      await db
        .insertInto('sso_saml_requests')
        .values({ tenant_id: tenantId, request_id: key, value, expires_at: new Date(now.getTime() + REQUEST_TTL_MS) })
        .onConflict((oc) => oc.columns(['tenant_id', 'request_id']).doNothing())
        .execute();
      return { value, createdAt: now.getTime() };
    },
    async getAsync(key) {
      const row = await db
        .selectFrom('sso_saml_requests')
        .select('value')
        .where(inTenant(tenantId))
        .where('request_id', '=', key)
        .where('expires_at', '>', deps.clock.now())
        .executeTakeFirst();
      return row?.value ?? null;
    },
    async removeAsync(key) {
      if (!key) return null;
      const row = await db.deleteFrom('sso_saml_requests').where(inTenant(tenantId)).where('request_id', '=', key).returning('value').executeTakeFirst();
      return row?.value ?? null;
    },
  };
}
