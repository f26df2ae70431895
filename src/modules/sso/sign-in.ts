import { inTenant } from '../../platform/db/scope.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { AuditActor } from '../../platform/audit/audit-log.js';
import { writeAudit } from '../../platform/audit/audit-log.js';
import { unauthorized, type AppError } from '../../platform/http/errors.js';
import { subjectFor } from '../tenancy/index.js';
import { issueTokens, type TokenResponse } from '../tenancy/index.js';
import { recordAddressFailure } from '../tenancy/index.js';
import type { JitRole, SsoProtocol } from './tables.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'tokenKey' | 'log'>;

/** What the IdP vouched for. (issuer, subject) is the key; the rest is informational and may change. */
export interface ExternalIdentity {
  protocol: SsoProtocol;
  issuer: string;
  subject: string;
  email?: string | null;
  displayName?: string | null;
  preferredUsername?: string | null;
  samlSessionIndex?: string | null;
}

export interface LoginTenant {
  id: string;
  slug: string;
  accountId: string;
}

export interface RequestMeta {
  ip: string;
  requestId: string;
}

function ssoActor(protocol: SsoProtocol, meta: RequestMeta): AuditActor {
  return { type: 'system', id: null, name: `sso:${protocol}`, ip: meta.ip, requestId: meta.requestId };
}

/**
 * A refused SSO login: counted against the client address (when `count`), audit-logged in the
 * tenant, and answered 401 with the reason.
 */
export async function refuseLogin(deps: Deps, tenantId: string, protocol: SsoProtocol, meta: RequestMeta, reason: string, options: { count?: boolean } = {}): Promise<AppError> {
  const db = deps.database.db;
  if (options.count !== false) await recordAddressFailure(db, deps.clock, meta.ip);
  await writeAudit(db, deps.clock, ssoActor(protocol, meta), {
    tenantId,
    action: 'auth.sso_login_failed',
    targetType: 'tenant',
    targetId: tenantId,
    details: { protocol, reason },
  });
  deps.log.info({ tenantId, protocol, ip: meta.ip, reason }, 'SSO login refused');
  return unauthorized(reason);
}

const USERNAME_CHARS = /[^a-z0-9._@+-]+/g;

/**
 * A username for a just-in-time user: `<slug>.<name the IdP gave>`, namespaced by tenant so it never
 * collides with (and is never linked to) a user of another tenant or a local user; a suffix from
 * the (issuer, subject) hash on collision.
 */
async function chooseUsername(trx: Kysely<Database>, slug: string, identity: ExternalIdentity): Promise<string> {
  const given = (identity.email || identity.preferredUsername || identity.displayName || identity.subject).toLowerCase();
  const cleaned =
    given
      .replace(USERNAME_CHARS, '-')
      .replace(/^[^a-z0-9]+/, '')
      .replace(/-+$/, '') || 'user';
  const base = `${slug}.${cleaned}`.slice(0, 64).replace(/[^a-z0-9]+$/, '');
  const digest = createHash('sha256').update(`${identity.issuer}\n${identity.subject}`).digest('hex');
  const candidates = [base, `${base.slice(0, 57)}-${digest.slice(0, 6)}`, `${base.slice(0, 51)}-${randomBytes(6).toString('hex')}`];
  for (const candidate of candidates) {
    const taken = await trx.selectFrom('users').select('id').where('username', '=', candidate).executeTakeFirst();
    if (!taken) return candidate;
  }
  return `${slug.slice(0, 30)}.${randomUUID()}`;
}

type Outcome = { tokens: TokenResponse } | { refused: string };

/**
 * Signs in the user the IdP vouched for: the identity (tenant, issuer, subject) maps to one user;
 * at its first login the user is created with a membership in the tenant in the configured default
 * role (just in time). Later logins keep the role an admin may have changed since. A membership an
 * admin removed is not re-created: the login is refused until an admin adds the user again.
 * Issues the normal token response in a new session, remembered for single log-out.
 */
export async function signInExternal(deps: Deps, tenant: LoginTenant, defaultRole: JitRole, identity: ExternalIdentity, meta: RequestMeta): Promise<TokenResponse> {
  const db = deps.database.db;
  let outcome: Outcome | undefined;
  for (let attempt = 0; attempt < 2 && !outcome; attempt++) {
    try {
      outcome = await db.transaction().execute((trx) => signInTrx(trx, deps, tenant, defaultRole, identity, meta));
    } catch (error) {
      // Two first logins of the same identity at once: the loser finds the winner's rows on retry.
      if ((error as { code?: string }).code !== '23505' || attempt > 0) throw error;
    }
  }
  if (!outcome || 'refused' in outcome) {
    throw await refuseLogin(deps, tenant.id, identity.protocol, meta, outcome && 'refused' in outcome ? outcome.refused : 'login failed', { count: false });
  }
  return outcome.tokens;
}

async function signInTrx(trx: Kysely<Database>, deps: Deps, tenant: LoginTenant, defaultRole: JitRole, identity: ExternalIdentity, meta: RequestMeta): Promise<Outcome> {
  const now = deps.clock.now();
  const actor = ssoActor(identity.protocol, meta);
  const existing = await trx
    .selectFrom('sso_identities as i')
    .innerJoin('users as u', 'u.id', 'i.user_id')
    .select(['i.id', 'i.user_id', 'u.disabled_at'])
    .where(inTenant(tenant.id, 'i'))
    .where('i.issuer', '=', identity.issuer)
    .where('i.subject', '=', identity.subject)
    .executeTakeFirst();

  let identityId: string;
  let userId: string;
  if (existing) {
    if (existing.disabled_at) return { refused: 'account disabled' };
    identityId = existing.id;
    userId = existing.user_id;
    await trx
      .updateTable('sso_identities')
      .set({ email: identity.email ?? null, display_name: identity.displayName ?? null, last_login_at: now })
      .where('id', '=', identityId)
      .execute();
  } else {
    userId = randomUUID();
    identityId = randomUUID();
    const username = await chooseUsername(trx, tenant.slug, identity);
    await trx
      .insertInto('users')
      .values({ id: userId, username, password_hash: null, account_id: tenant.accountId, is_system_admin: false, created_at: now, updated_at: now })
      .execute();
    await trx.insertInto('memberships').values({ user_id: userId, tenant_id: tenant.id, role: defaultRole, created_at: now, updated_at: now }).execute();
    await trx
      .insertInto('sso_identities')
      .values({
        id: identityId,
        tenant_id: tenant.id,
        protocol: identity.protocol,
        issuer: identity.issuer,
        subject: identity.subject,
        user_id: userId,
        email: identity.email ?? null,
        display_name: identity.displayName ?? null,
        created_at: now,
        last_login_at: now,
      })
      .execute();
    await writeAudit(trx, deps.clock, actor, {
      tenantId: tenant.id,
      action: 'sso.user_provisioned',
      targetType: 'user',
      targetId: userId,
      details: { protocol: identity.protocol, issuer: identity.issuer, subject: identity.subject, username, role: defaultRole },
    });
  }

  const subject = await subjectFor(trx, userId, tenant.id);
  if (!subject) return { refused: 'no longer a member of this tenant: ask a tenant admin to add the user again' };
  const sessionId = randomUUID();
  await trx.insertInto('sessions').values({ id: sessionId, user_id: userId, created_at: now }).execute();
  const tokens = await issueTokens(trx, deps, subject, sessionId);
  await trx
    .insertInto('sso_sessions')
    .values({ session_id: sessionId, identity_id: identityId, tenant_id: tenant.id, saml_session_index: identity.samlSessionIndex ?? null, created_at: now })
    .execute();
  await writeAudit(
    trx,
    deps.clock,
    { type: 'user', id: userId, name: subject.username, ip: meta.ip, requestId: meta.requestId },
    {
      tenantId: tenant.id,
      workspaceId: subject.workspaceId,
      action: 'auth.sso_login',
      targetType: 'user',
      targetId: userId,
      details: { protocol: identity.protocol, issuer: identity.issuer, subject: identity.subject, session_id: sessionId },
    },
  );
  return { tokens };
}

/** The token response as URL-fragment parameters, for the redirect to the configured app URL. */
export function tokenFragment(tokens: TokenResponse): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(tokens)) {
    params.set(key, value instanceof Date ? value.toISOString() : String(value));
  }
  return params.toString();
}
