import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';

/** The JWT algorithm is pinned: tokens with `none` or any other algorithm are refused. */
export const TOKEN_ALGORITHM = 'HS256';
const ISSUER = 'controlgraph';

export interface AccessClaims {
  user_id: string;
  account_id: string;
  tenant_id: string;
  workspace_id: string;
  role: string;
  /** The session (refresh chain) the token belongs to; logout revokes it. */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface SignInput {
  userId: string;
  accountId: string;
  tenantId: string;
  workspaceId: string;
  role: string;
  sessionId: string;
  now: Date;
  ttlMs: number;
}

export async function signAccessToken(key: Uint8Array, input: SignInput): Promise<{ token: string; jti: string; expiresAt: Date }> {
  const jti = randomUUID();
  const iat = Math.floor(input.now.getTime() / 1000);
  const exp = iat + Math.floor(input.ttlMs / 1000);
  const token = await new SignJWT({
    user_id: input.userId,
    account_id: input.accountId,
    tenant_id: input.tenantId,
    workspace_id: input.workspaceId,
    role: input.role,
    sid: input.sessionId,
  })
    .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: 'JWT' })
    .setSubject(input.userId)
    .setIssuer(ISSUER)
    .setJti(jti)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key);
  return { token, jti, expiresAt: new Date(exp * 1000) };
}

export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError';
}

const CLAIM_STRINGS = ['user_id', 'account_id', 'tenant_id', 'workspace_id', 'role', 'sid', 'jti'] as const;

/** Verifies signature, algorithm, issuer and expiry (against the injected clock). */
export async function verifyAccessToken(key: Uint8Array, token: string, now: Date): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [TOKEN_ALGORITHM],
      issuer: ISSUER,
      currentDate: now,
    });
    for (const claim of CLAIM_STRINGS) {
      if (typeof payload[claim] !== 'string') throw new InvalidTokenError(`token lacks the ${claim} claim`);
    }
    return payload as unknown as AccessClaims;
  } catch (error) {
    if (error instanceof InvalidTokenError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError('token expired');
    throw new InvalidTokenError('invalid token');
  }
}
