import { tenantIs } from '../../platform/db/scope.js';
import { sql } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { DatabaseHandle } from '../db/database.js';
import type { AuthCache } from './auth-cache.js';
import { AppError, forbidden, notFound, rateLimited, unauthorized } from '../http/errors.js';
import { isRole, permissionsOf, ROLE_LEVEL, expandKeyPermissions, type Role } from '../rbac/roles.js';
import type { Plan, RateLimiter } from '../ratelimit/limiter.js';
import { InvalidTokenError, verifyAccessToken, type AccessClaims } from './access-tokens.js';
import { hashSecret, looksLikeApiKey } from './api-key-secret.js';
import { addressAllowed } from './ip-allowlist.js';
import { assertCsrfHeader, isUnsafeMethod, sessionCookiesOf } from './session-cookies.js';
import type { Actor, RequestContext } from './actor.js';
import './tables.js';
import '../http/route-config.js';
import { UUID_PATTERN } from '../http/schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authenticator on every non-public route. */
    ctx: RequestContext | null;
  }
}

interface JwtRow {
  username: string;
  account_id: string;
  is_system_admin: boolean;
  disabled: boolean;
  session_revoked: boolean;
  jti_revoked: boolean;
  token_role: Role | null;
  token_workspace_ok: boolean;
  target_exists: boolean;
  target_plan: Plan | null;
  target_default_workspace: string | null;
  /** The plan of the token's own tenant: its bucket pays for a request refused on another tenant. */
  token_plan: Plan | null;
  /** A password-only session while the token's tenant requires multi-factor sign-in. */
  mfa_enrollment_required: boolean;
}

/** What a session held to enrollment gets from every route not marked `duringMfaEnrollment`. */
const mfaEnrollmentRequired = () =>
  new AppError(403, 'MFA_ENROLLMENT_REQUIRED', 'your tenant requires multi-factor sign-in: enroll an authenticator first', {
    enroll: 'POST /api/v1/auth/mfa/totp/enroll',
  });

type KeyLookup = {
  row: {
    id: string;
    name: string;
    account_id: string;
    tenant_id: string;
    workspace_id: string | null;
    tenant_ids: string[];
    permissions: string[];
    allowed_ips: string[];
    expires_at: Date | null;
    revoked_at: Date | null;
    last_used_at: Date | null;
    /** The plan of the key's own tenant. */
    plan: Plan;
  };
  target: { plan: Plan; default_workspace: string | null } | null;
} | null;

interface Resolved {
  actor: Actor;
  scopeTenantId: string;
  scopeWorkspaceId: string;
  plan: Plan;
}

/** The rate-limit bucket a request spends: one per tenant, sized by its plan. */
interface Bucket {
  tenantId: string;
  plan: Plan;
}

/**
 * A verified credential refused the tenant it asked for (403 no access, 404 no such tenant). The
 * request is authenticated, so it still spends a bucket and carries the rate-limit headers: the
 * bucket of the credential's own tenant, never that of the tenant in the path (a stranger must not
 * drain another tenant's bucket).
 */
interface Refused {
  refusal: Error;
  bucket: Bucket;
}

/**
 * The one place where requests are authenticated and authorised: it resolves the actor from a JWT (a
 * bearer token or the console's session cookie) or an API key, fixes the data scope (tenant from the path, workspace from the token), checks the
 * route's declared permission and the tenant's rate limit. Handlers only read `request.ctx`.
 */
/** What the authenticator uses of the app's dependencies (the platform does not import src/deps.ts). */
export interface AuthenticatorDeps {
  database: DatabaseHandle;
  clock: Clock;
  tokenKey: () => Promise<Uint8Array>;
  rateLimiter: RateLimiter | null;
  authCache: AuthCache;
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createAuthenticator(deps: AuthenticatorDeps) {
  const db = deps.database.db;
  let lastUsedWrites = new Map<string, number>();

  async function fromJwt(token: string, pathTenant: string | undefined): Promise<Resolved | Refused> {
    // A token's signature is verified once; any other token string (a tampered one too) misses the
    // cache and is verified. Expiry is checked on every request against the clock.
    let claims = deps.authCache.get<AccessClaims>(`token:${token}`);
    if (!claims) {
      const generation = deps.authCache.mark();
      try {
        claims = await verifyAccessToken(await deps.tokenKey(), token, deps.clock.now());
      } catch (error) {
        throw unauthorized(error instanceof InvalidTokenError ? error.message : 'invalid token');
      }
      deps.authCache.set(`token:${token}`, claims, generation);
    } else if (claims.exp * 1000 <= deps.clock.now().getTime()) {
      throw unauthorized('token expired');
    }
    if (![claims.user_id, claims.tenant_id, claims.workspace_id, claims.sid, claims.jti].every((v) => UUID_PATTERN.test(v))) {
      throw unauthorized('invalid token');
    }
    const targetTenant = pathTenant ?? claims.tenant_id;
    const cacheKey = `jwt:${claims.jti}:${targetTenant}`;
    let found = deps.authCache.get<JwtRow | null>(cacheKey);
    if (found === undefined) {
      const generation = deps.authCache.mark();
      found = await loadJwtRow(claims, targetTenant);
      deps.authCache.set(cacheKey, found, generation);
    }
    return jwtResolution(claims, targetTenant, found);
  }

  /** One round trip: the user, the session, the membership in the tenant asked for, and revocation. */
  async function loadJwtRow(claims: AccessClaims, targetTenant: string): Promise<JwtRow | null> {
    const row = await sql<JwtRow>`
      SELECT u.username, u.account_id, u.is_system_admin, u.disabled_at IS NOT NULL AS disabled,
        s.revoked_at IS NOT NULL AS session_revoked,
        EXISTS (SELECT 1 FROM revoked_access_tokens r WHERE r.jti = ${claims.jti}) AS jti_revoked,
        (SELECT m.role FROM memberships m WHERE m.user_id = u.id AND ${tenantIs(claims.tenant_id, 'm')}) AS token_role,
        EXISTS (SELECT 1 FROM workspaces w WHERE w.id = ${claims.workspace_id} AND ${tenantIs(claims.tenant_id, 'w')}) AS token_workspace_ok,
        t.id IS NOT NULL AS target_exists, t.plan AS target_plan,
        (SELECT w.id FROM workspaces w WHERE w.tenant_id = t.id AND w.is_default) AS target_default_workspace,
        (SELECT tt.plan FROM tenants tt WHERE tt.id = ${claims.tenant_id}) AS token_plan,
        s.password_only AND COALESCE((SELECT tt.mfa_required FROM tenants tt WHERE tt.id = ${claims.tenant_id}), false) AS mfa_enrollment_required
      FROM users u
      JOIN sessions s ON s.id = ${claims.sid} AND s.user_id = u.id
      LEFT JOIN tenants t ON t.id = ${UUID_PATTERN.test(targetTenant) ? targetTenant : null}
      WHERE u.id = ${claims.user_id}`.execute(db);
    return row.rows[0] ?? null;
  }

  function jwtResolution(claims: AccessClaims, targetTenant: string, found: JwtRow | null): Resolved | Refused {
    if (!found) throw unauthorized('token no longer valid');
    if (found.session_revoked || found.jti_revoked) throw unauthorized('token revoked');
    if (found.disabled) throw unauthorized('account disabled');
    if (!found.token_workspace_ok) throw unauthorized('the workspace of this token no longer exists');
    // Platform operators are system-admin wherever they are, whatever membership they also hold.
    const role: Role | null = found.is_system_admin ? 'system-admin' : found.token_role;
    if (!role || !isRole(role)) throw unauthorized('no longer a member of this tenant');
    const actor: Actor = {
      type: 'user',
      id: claims.user_id,
      userId: claims.user_id,
      name: found.username,
      accountId: found.account_id,
      tenantId: claims.tenant_id,
      workspaceId: claims.workspace_id,
      role,
      level: ROLE_LEVEL[role],
      permissions: permissionsOf(role),
      isSystemAdmin: found.is_system_admin,
      sessionId: claims.sid,
      jti: claims.jti,
      tokenExpiresAt: new Date(claims.exp * 1000),
      keyTenantIds: null,
      mfaEnrollmentRequired: found.mfa_enrollment_required,
    };
    if (targetTenant === claims.tenant_id) {
      return { actor, scopeTenantId: claims.tenant_id, scopeWorkspaceId: claims.workspace_id, plan: found.target_plan ?? 'enterprise' };
    }
    // Another tenant in the path: only platform operators span tenants; they act in its default workspace.
    const own: Bucket = { tenantId: claims.tenant_id, plan: found.token_plan ?? 'enterprise' };
    if (!found.is_system_admin) return { refusal: forbidden('no access to this tenant'), bucket: own };
    if (!found.target_exists || !found.target_default_workspace) return { refusal: notFound('tenant not found'), bucket: own };
    const systemActor = { ...actor, role: 'system-admin' as const, level: ROLE_LEVEL['system-admin'], permissions: permissionsOf('system-admin') };
    return { actor: systemActor, scopeTenantId: targetTenant, scopeWorkspaceId: found.target_default_workspace, plan: found.target_plan ?? 'enterprise' };
  }

  async function fromApiKey(key: string, pathTenant: string | undefined, ip: string): Promise<Resolved | Refused> {
    const hash = hashSecret(key);
    const cacheKey = `key:${hash}:${pathTenant ?? ''}`;
    let found = deps.authCache.get<KeyLookup>(cacheKey);
    if (found === undefined) {
      const generation = deps.authCache.mark();
      found = await loadKey(hash, pathTenant);
      deps.authCache.set(cacheKey, found, generation);
    }
    return keyResolution(found, pathTenant, ip);
  }

  async function loadKey(hash: string, pathTenant: string | undefined): Promise<KeyLookup> {
    const row = await db
      .selectFrom('api_keys as k')
      .innerJoin('tenants as t', 't.id', 'k.tenant_id')
      .select([
        'k.id',
        'k.name',
        'k.account_id',
        'k.tenant_id',
        'k.workspace_id',
        'k.tenant_ids',
        'k.permissions',
        'k.allowed_ips',
        'k.expires_at',
        'k.revoked_at',
        'k.last_used_at',
        't.plan',
      ])
      .where('k.key_hash', '=', hash)
      .executeTakeFirst();
    if (!row) return null;
    const targetTenant = pathTenant ?? row.tenant_id;
    const target = row.tenant_ids.includes(targetTenant)
      ? await db
          .selectFrom('tenants as t')
          .leftJoin('workspaces as w', (join) => join.onRef('w.tenant_id', '=', 't.id').on('w.is_default', '=', true))
          .select(['t.plan', 'w.id as default_workspace'])
          .where('t.id', '=', targetTenant)
          .executeTakeFirst()
      : undefined;
    return { row, target: target ?? null };
  }

  function keyResolution(found: KeyLookup, pathTenant: string | undefined, ip: string): Resolved | Refused {
    if (!found) throw unauthorized('invalid API key');
    const { row, target } = found;
    const now = deps.clock.now();
    if (row.revoked_at) throw unauthorized('API key revoked');
    if (row.expires_at && new Date(row.expires_at) <= now) throw unauthorized('API key expired');
    // From an address the key is not allowed from, the key is no credential: nothing is spent.
    if (!addressAllowed(row.allowed_ips, ip)) throw forbidden('API key not allowed from this address');
    const targetTenant = pathTenant ?? row.tenant_id;
    const own: Bucket = { tenantId: row.tenant_id, plan: row.plan };
    if (!row.tenant_ids.includes(targetTenant)) return { refusal: forbidden('no access to this tenant'), bucket: own };
    if (!target?.default_workspace) return { refusal: notFound('tenant not found'), bucket: own };
    const workspaceId = targetTenant === row.tenant_id && row.workspace_id ? row.workspace_id : target.default_workspace;
    touchLastUsed(row.id, row.last_used_at, now);
    return {
      actor: {
        type: 'api_key',
        id: row.id,
        userId: null,
        name: `api-key:${row.name}`,
        accountId: row.account_id,
        tenantId: row.tenant_id,
        workspaceId,
        role: null,
        level: 0,
        permissions: expandKeyPermissions(row.permissions).granted,
        isSystemAdmin: false,
        sessionId: null,
        jti: null,
        tokenExpiresAt: row.expires_at ? new Date(row.expires_at) : null,
        keyTenantIds: row.tenant_ids,
      },
      scopeTenantId: targetTenant,
      scopeWorkspaceId: workspaceId,
      plan: target.plan,
    };
  }

  /** last_used_at is informational: write it at most once a minute per key, off the request path. */
  function touchLastUsed(id: string, previous: Date | string | null, now: Date): void {
    const last = Math.max(previous ? new Date(previous).getTime() : 0, lastUsedWrites.get(id) ?? 0);
    if (now.getTime() - last < 60_000) return;
    if (lastUsedWrites.size > 10_000) lastUsedWrites = new Map();
    lastUsedWrites.set(id, now.getTime());
    db.updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute()
      .catch(() => undefined);
  }

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.ctx = null;
    const config = request.routeOptions.config;
    if (!request.routeOptions.url) return;
    if (config?.public) {
      if (config.csrf) assertCsrfHeader(request);
      return;
    }
    const credential = credentialOf(request);
    const pathTenant = (request.params as Record<string, string> | undefined)?.tenantID;
    const resolved =
      credential.source === 'header' && looksLikeApiKey(credential.value)
        ? await fromApiKey(credential.value, pathTenant, request.ip)
        : await fromJwt(credential.value, pathTenant);
    // From here on the request is authenticated: refused or not, it spends its bucket and carries
    // the rate-limit headers (an empty bucket answers 429 before any refusal).
    let bucket: Bucket;
    let refusal: Error | null = null;
    if ('refusal' in resolved) {
      ({ bucket, refusal } = resolved);
    } else {
      bucket = { tenantId: resolved.scopeTenantId, plan: resolved.plan };
      if (resolved.actor.mfaEnrollmentRequired && !config?.duringMfaEnrollment) {
        refusal = mfaEnrollmentRequired();
      } else if (config?.permission && !resolved.actor.permissions.has(config.permission)) {
        refusal = forbidden(`missing permission ${config.permission}`);
      } else {
        request.ctx = {
          actor: resolved.actor,
          scope: { tenantId: resolved.scopeTenantId, workspaceId: resolved.scopeWorkspaceId },
          ip: request.ip,
          requestId: request.id,
        };
      }
    }
    if (deps.rateLimiter && !config?.unlimited) {
      const decision = await deps.rateLimiter.consume(`tenant:${bucket.tenantId}`, bucket.plan, deps.clock.now());
      reply.header('x-ratelimit-limit', decision.limit);
      reply.header('x-ratelimit-remaining', decision.remaining);
      reply.header('x-ratelimit-reset', decision.resetAt);
      if (!decision.allowed) {
        throw rateLimited(decision.retryAfter);
      }
    }
    if (refusal) throw refusal;
  };
}

/**
 * The credential of a request: the Authorization header always wins; without one (and without an
 * API key misplaced in X-API-Key) the console's session cookie carries the access JWT, and then an
 * unsafe method must prove it comes from the console (CSRF header), checked before the token.
 */
function credentialOf(request: FastifyRequest): { value: string; source: 'header' | 'cookie' } {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer[ ]+([^\s]+)$/i.exec(header);
    if (!match) throw unauthorized('malformed authorization header: expected "Bearer <token>"');
    return { value: match[1]!, source: 'header' };
  }
  // A common habit from other APIs: say where the key goes instead of "missing bearer token".
  if (request.headers['x-api-key'] !== undefined) {
    throw unauthorized('API keys are not read from X-API-Key: send the key as "Authorization: Bearer <key>"');
  }
  const cookie = sessionCookiesOf(request).access;
  if (!cookie) throw unauthorized('missing bearer token');
  if (isUnsafeMethod(request.method)) assertCsrfHeader(request);
  return { value: cookie, source: 'cookie' };
}

/** The request's context; routes behind the authenticator always have one. */
export function contextOf(request: FastifyRequest): RequestContext {
  if (!request.ctx) throw unauthorized('authentication required');
  return request.ctx;
}
