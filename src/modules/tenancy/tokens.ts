import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { signAccessToken } from '../../platform/auth/access-tokens.js';
import { hashSecret } from '../../platform/auth/api-key-secret.js';
import type { Role } from '../../platform/rbac/roles.js';

export interface TokenResponse {
  token: string;
  refresh_token: string;
  expires_at: Date;
  refresh_expires_at: Date;
  user_id: string;
  username: string;
  account_id: string;
  tenant_id: string;
  workspace_id: string;
  role: Role;
  onboarding_completed: boolean;
  mfa_enrollment_required: boolean;
}

export interface SessionSubject {
  userId: string;
  username: string;
  accountId: string;
  tenantId: string;
  workspaceId: string;
  role: Role;
  onboardingCompleted: boolean;
}

/** Refresh tokens are opaque (`cgr_` + random); only their hash is stored. */
export function newRefreshToken(): string {
  return 'cgr_' + randomBytes(32).toString('base64url');
}

/**
 * Issues an access token and a refresh token in a session (a new one unless given). Call it inside
 * the transaction that justified it (login, refresh, switch), so both rows commit together.
 * `passwordOnly` marks a new session opened with a password and no second factor: in a tenant that
 * requires multi-factor sign-in it may only enroll (the authenticator enforces it; the response says so).
 */
export async function issueTokens(
  trx: Kysely<Database>,
  deps: Pick<AppDeps, 'clock' | 'config' | 'tokenKey'>,
  subject: SessionSubject,
  sessionId?: string,
  options: { passwordOnly?: boolean } = {},
): Promise<TokenResponse> {
  const now = deps.clock.now();
  const session = sessionId ?? randomUUID();
  if (!sessionId) {
    await trx
      .insertInto('sessions')
      .values({ id: session, user_id: subject.userId, created_at: now, password_only: options.passwordOnly ?? false })
      .execute();
  }
  const held = await trx
    .selectFrom('sessions as s')
    .innerJoin('tenants as t', (join) => join.on('t.id', '=', subject.tenantId))
    .select((eb) => eb.and([eb.ref('s.password_only'), eb.ref('t.mfa_required')]).as('held'))
    .where('s.id', '=', session)
    .executeTakeFirst();
  const refresh = newRefreshToken();
  const refreshExpiresAt = new Date(now.getTime() + deps.config.refreshTokenTtlMs);
  await trx
    .insertInto('refresh_tokens')
    .values({
      id: randomUUID(),
      session_id: session,
      token_hash: hashSecret(refresh),
      tenant_id: subject.tenantId,
      workspace_id: subject.workspaceId,
      expires_at: refreshExpiresAt,
      created_at: now,
    })
    .execute();
  const access = await signAccessToken(await deps.tokenKey(), {
    userId: subject.userId,
    accountId: subject.accountId,
    tenantId: subject.tenantId,
    workspaceId: subject.workspaceId,
    role: subject.role,
    sessionId: session,
    now,
    ttlMs: deps.config.accessTokenTtlMs,
  });
  return {
    token: access.token,
    refresh_token: refresh,
    expires_at: access.expiresAt,
    refresh_expires_at: refreshExpiresAt,
    user_id: subject.userId,
    username: subject.username,
    account_id: subject.accountId,
    tenant_id: subject.tenantId,
    workspace_id: subject.workspaceId,
    role: subject.role,
    onboarding_completed: subject.onboardingCompleted,
    mfa_enrollment_required: held?.held === true,
  };
}
