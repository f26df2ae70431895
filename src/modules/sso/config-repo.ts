import { inTenant } from '../../platform/db/scope.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { notFound } from '../../platform/http/errors.js';
import type { SsoConfigRow, SsoProtocol } from './tables.js';
import './tables.js';

export interface TenantSso {
  tenant: { id: string; slug: string; accountId: string };
  config: SsoConfigRow;
}

export async function configOfTenant(db: Kysely<Database>, tenantId: string): Promise<SsoConfigRow | undefined> {
  return db.selectFrom('sso_configs').selectAll().where(inTenant(tenantId)).executeTakeFirst();
}

/**
 * The tenant behind a public SSO path and its configuration. An unknown slug and a tenant without
 * (this kind of) SSO answer alike, so the paths do not tell which tenants exist.
 */
export async function configBySlug(db: Kysely<Database>, slug: string, protocol: SsoProtocol): Promise<TenantSso> {
  const row = await db
    .selectFrom('tenants as t')
    .innerJoin('sso_configs as c', 'c.tenant_id', 't.id')
    .selectAll('c')
    .select(['t.slug', 't.account_id'])
    .where('t.slug', '=', slug)
    .executeTakeFirst();
  if (!row || row.protocol !== protocol) throw notFound(`${protocol === 'oidc' ? 'OIDC' : 'SAML'} single sign-on is not configured for this tenant`);
  const { slug: tenantSlug, account_id, ...config } = row;
  return { tenant: { id: row.tenant_id, slug: tenantSlug, accountId: account_id }, config };
}
